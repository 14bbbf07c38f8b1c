import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import { DomainError } from '../common/errors.ts';
import { createCredential, deliveriesView, listCredentials, removeCredential, updateCredential } from '../smpp-server/credentials.ts';
import { Listing, minute } from './table.ts';

/** The CLI's `smpp-credential` commands (docs/smpp-server.md, "Credentials"): the same use cases as the operator API. */
export const SMPP_USAGE = `  smpp-credential add --account ID --system-id NAME --route ID [--password P] [--allowed-ip CIDR ...] [--window N] [--rate N] [--max-binds N]
                  (SMPP credentials of the account: at most 15 characters of system id and 8 of password; a password is generated when not given)
  smpp-credential update --system-id NAME [--password P] [--route ID] [--allowed-ip CIDR ... | --clear] [--window N] [--rate N] [--max-binds N]
  smpp-credential list --account ID [--json]
  smpp-credential remove --system-id NAME
  smpp-credential deliveries --account ID   (receipts and replies waiting for the account's SMPP customers)`;

export interface SmppValues {
  account?: string | undefined;
  'system-id'?: string | undefined;
  password?: string | undefined;
  route?: string | undefined;
  'allowed-ip'?: string[] | undefined;
  window?: string | undefined;
  rate?: string | undefined;
  'max-binds'?: string | undefined;
  clear?: boolean | undefined;
}

function text(values: SmppValues, name: 'system-id' | 'account' | 'route'): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new DomainError('VALIDATION', `--${name} is required`);
  return v;
}

function whole(values: SmppValues, name: 'account' | 'route' | 'window' | 'rate' | 'max-binds', required: boolean): number | undefined {
  const v = values[name];
  if (v === undefined) {
    if (required) throw new DomainError('VALIDATION', `--${name} is required`);
    return undefined;
  }
  if (!/^\d{1,15}$/.test(v.trim())) throw new DomainError('VALIDATION', `--${name} must be a whole number`);
  return Number(v);
}

export async function smppCredentialCommand(db: Kysely<Database>, command: string | undefined, values: SmppValues): Promise<unknown> {
  switch (command) {
    case 'add':
      return createCredential(db, whole(values, 'account', true) as number, {
        systemId: text(values, 'system-id'),
        password: values.password,
        routeId: whole(values, 'route', true),
        allowedIps: values['allowed-ip'],
        windowSize: whole(values, 'window', false),
        submitsPerSecond: whole(values, 'rate', false),
        maxBinds: whole(values, 'max-binds', false),
      });
    case 'update':
      if (values.clear && values['allowed-ip']?.length) throw new DomainError('VALIDATION', 'give --allowed-ip ... or --clear, not both');
      return updateCredential(db, text(values, 'system-id'), {
        password: values.password,
        routeId: whole(values, 'route', false),
        allowedIps: values.clear ? null : values['allowed-ip'],
        windowSize: whole(values, 'window', false),
        submitsPerSecond: whole(values, 'rate', false),
        maxBinds: whole(values, 'max-binds', false),
      });
    case 'list': {
      const records = await listCredentials(db, whole(values, 'account', true) as number);
      return new Listing(
        { records, total: records.length },
        [
          { title: 'SYSTEM ID', value: (c) => c.systemId },
          { title: 'ROUTE', value: (c) => c.routeId, right: true },
          { title: 'WINDOW', value: (c) => c.windowSize, right: true },
          { title: 'RATE/S', value: (c) => (c.submitsPerSecond === 0 ? 'any' : c.submitsPerSecond), right: true },
          { title: 'BINDS', value: (c) => c.maxBinds, right: true },
          { title: 'ALLOWED IPS', value: (c) => (c.allowedIps === null ? 'any' : c.allowedIps.join(',')) },
          { title: 'CREATED (UTC)', value: (c) => minute(c.createdAt) },
        ],
        'credential',
        0,
      );
    }
    case 'remove':
      await removeCredential(db, text(values, 'system-id'));
      return { removed: true };
    case 'deliveries':
      return deliveriesView(db, whole(values, 'account', true) as number);
    default:
      throw new DomainError('VALIDATION', `unknown command "smpp-credential ${command ?? ''}"\n\n${SMPP_USAGE}`);
  }
}
