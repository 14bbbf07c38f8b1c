import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import { DomainError } from '../common/errors.ts';
import { createPanelUser, deletePanelUser, generatePassword, listPanelUsers, type PanelUser } from '../panel/users.ts';
import { Listing, minute } from './table.ts';

/** The CLI's `panel-user` and `operator-user` commands (docs/panel.md, "Panel users"): the same use cases as the operator API. */
export const PANEL_USAGE = `  panel-user add --account ID --email EMAIL [--password P]   (signs in to the account's browser panel at /panel/; a password is generated and printed when not given)
  panel-user list --account ID [--json]
  panel-user remove --user ID   (its sessions end at once)
  operator-user add --email EMAIL [--password P]   (signs in to the operator console at /panel/)
  operator-user list [--json]`;

export interface PanelUserValues {
  account?: string | undefined;
  email?: string | undefined;
  password?: string | undefined;
  user?: string | undefined;
}

function whole(values: PanelUserValues, name: 'account' | 'user'): number {
  const v = values[name];
  if (v === undefined || v === '') throw new DomainError('VALIDATION', `--${name} is required`);
  if (!/^\d{1,15}$/.test(v.trim()) || Number(v) < 1) throw new DomainError('VALIDATION', `--${name} must be a positive integer`);
  return Number(v);
}

function email(values: PanelUserValues): string {
  if (!values.email) throw new DomainError('VALIDATION', '--email is required');
  return values.email;
}

/** Creates the user; a generated password is answered once, with the user. */
async function add(db: Kysely<Database>, accountId: number | null, values: PanelUserValues) {
  const password = values.password ?? generatePassword();
  const user = await createPanelUser(db, { email: email(values), password, accountId });
  return values.password === undefined ? { ...user, password } : user;
}

const listing = (users: PanelUser[]) =>
  new Listing(
    { records: users, total: users.length },
    [
      { title: 'ID', value: (u) => u.id, right: true },
      { title: 'EMAIL', value: (u) => u.email },
      { title: 'CREATED (UTC)', value: (u) => minute(u.createdAt) },
    ],
    'panel user',
    0,
  );

export async function panelUserCommand(db: Kysely<Database>, group: string, command: string | undefined, values: PanelUserValues): Promise<unknown> {
  switch (`${group} ${command}`) {
    case 'panel-user add':
      return add(db, whole(values, 'account'), values);
    case 'panel-user list':
      return listing(await listPanelUsers(db, whole(values, 'account')));
    case 'panel-user remove':
      await deletePanelUser(db, whole(values, 'user'));
      return { removed: true };
    case 'operator-user add':
      return add(db, null, values);
    case 'operator-user list':
      return listing(await listPanelUsers(db, null));
    default:
      throw new DomainError('VALIDATION', `unknown command "${group} ${command ?? ''}"\n\n${PANEL_USAGE}`);
  }
}
