import { parseArgs } from 'node:util';
import pino from 'pino';
import { ConfigError, loadConfig } from '../config.ts';
import { openBase } from '../base.ts';
import { operator, type Operator } from '../operator.ts';
import { DomainError } from '../common/errors.ts';
import { Listing, Sections, minute } from './table.ts';
import { runMaintenance } from './backup.ts';
import { importCsvFile } from './csv-import.ts';
import { SMPP_USAGE, smppCredentialCommand } from './smpp-credentials.ts';
import { PANEL_USAGE, panelUserCommand } from './panel-users.ts';

const USAGE = `Operator CLI (same use cases as the /admin API)

  account create --name NAME [--role CUSTOMER|RESELLER] [--timezone TZ] [--balance N]
  account show --account ID
  account list [--name TEXT] [--status active|deactivated|all] [--order newest|id] [--skip N] [--limit N] [--json]
  account deactivate --account ID   (its keys and its child users' keys are refused; accepted messages still go)
  account activate --account ID
  account rate-limit --account ID [--per-second N | --off | --default]   (requests a second on the HTTP interfaces; without a flag, shows it)
  key issue --account ID [--allowed-ip CIDR ...]
  key revoke --key ID
  key list --account ID [--skip N] [--limit N] [--json]   (last 4 characters of each key, never the key)
  credits add --account ID --amount N [--reason TEXT]
  route create --name NAME --price N --reply-price N [--product NAME] [--product-id N] [--channel SMS|RCS] [--connector NAME] [--fallback-route ID]
  route fallback --route ID --fallback-route ID|none   (an RCS route's SMS route for phones without RCS)
  route grant --account ID --route ID
  route legs --route ID [--leg CONNECTOR[:PREFIX,PREFIX...][:WEIGHT][:PRIORITY] ... | --clear]
             (the connections carrying the route's messages, in order; without --leg or --clear, shows them. PRIORITY defaults
              to the leg's place, 1, 2, ...; WEIGHT to 1; no prefixes: any receiver. e.g. --leg claro:5511,55219 --leg tim::3:2)
  route list [--account ID] [--skip N] [--limit N] [--json]   (every route, or those granted to the account)
  group create --account ID --name NAME [--number PHONE ...]
  cluster [--json]   (the gateway processes alive on the database, their roles and connections, and the outbox per connection)
  group import --account ID --name NAME --csv FILE   (first column: phone; optional second column: name; a header row is skipped; streamed, any size)
  backup --to FILE [--force]      (SQLite: a consistent copy, mode 0600, while the gateway runs; PostgreSQL: use pg_dump)
  restore --from FILE [--force]   (SQLite: every gateway process on the data directory stopped; the old database is kept aside)
${SMPP_USAGE}
${PANEL_USAGE}

Uses the same database as the server (GATEWAY_DATA_DIR / DATABASE_URL).`;

const options = {
  name: { type: 'string' },
  role: { type: 'string' },
  timezone: { type: 'string' },
  balance: { type: 'string' },
  account: { type: 'string' },
  key: { type: 'string' },
  'allowed-ip': { type: 'string', multiple: true },
  amount: { type: 'string' },
  reason: { type: 'string' },
  price: { type: 'string' },
  'reply-price': { type: 'string' },
  product: { type: 'string' },
  'product-id': { type: 'string' },
  channel: { type: 'string' },
  connector: { type: 'string' },
  route: { type: 'string' },
  'fallback-route': { type: 'string' },
  leg: { type: 'string', multiple: true },
  clear: { type: 'boolean' },
  number: { type: 'string', multiple: true },
  csv: { type: 'string' },
  to: { type: 'string' },
  from: { type: 'string' },
  force: { type: 'boolean' },
  status: { type: 'string' },
  order: { type: 'string' },
  skip: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
  'per-second': { type: 'string' },
  off: { type: 'boolean' },
  default: { type: 'boolean' },
  help: { type: 'boolean' },
  'system-id': { type: 'string' },
  password: { type: 'string' },
  window: { type: 'string' },
  rate: { type: 'string' },
  'max-binds': { type: 'string' },
  email: { type: 'string' },
  user: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>['values'];

function need(values: Values, name: keyof Values): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new DomainError('VALIDATION', `--${name} is required`);
  return v;
}

const id = (values: Values, name: keyof Values) => {
  const n = Number(need(values, name));
  if (!Number.isSafeInteger(n) || n < 1) throw new DomainError('VALIDATION', `--${name} must be a positive integer`);
  return n;
};

/** One --leg CONNECTOR[:PREFIX,PREFIX...][:WEIGHT][:PRIORITY] (the use case checks connector, prefixes and ranges). */
function parseLeg(text: string, index: number) {
  const [connector = '', prefixes = '', weight = '', priority = '', ...rest] = text.split(':');
  const whole = (field: string, v: string) => {
    if (!/^\d{1,7}$/.test(v)) throw new DomainError('VALIDATION', `--leg ${JSON.stringify(text)}: ${field} must be a whole number`);
    return Number(v);
  };
  if (connector === '' || rest.length)
    throw new DomainError('VALIDATION', `--leg ${JSON.stringify(text)}: expected CONNECTOR[:PREFIX,PREFIX...][:WEIGHT][:PRIORITY]`);
  return {
    connector,
    prefixes: prefixes === '' ? [] : prefixes.split(','),
    weight: weight === '' ? 1 : whole('weight', weight),
    priority: priority === '' ? index + 1 : whole('priority', priority),
  };
}

/** --skip and --limit as given (the use case checks them: whole numbers, limit at most 1,000). */
const paging = (values: Values) => ({
  skip: values.skip === undefined ? undefined : Number(values.skip.trim() === '' ? Number.NaN : values.skip),
  limit: values.limit === undefined ? undefined : Number(values.limit.trim() === '' ? Number.NaN : values.limit),
});

async function run(ops: Operator, command: string, values: Values): Promise<unknown> {
  switch (command) {
    case 'account create':
      return ops.createAccount({
        name: need(values, 'name'),
        role: values.role as 'CUSTOMER' | 'RESELLER' | undefined,
        timezone: values.timezone,
        balance: values.balance,
      });
    case 'account show':
      return ops.getAccount(id(values, 'account'));
    case 'account list': {
      const page = paging(values);
      const data = await ops.listAccounts({ ...page, name: values.name, status: values.status, order: values.order });
      return new Listing(
        data,
        [
          { title: 'ID', value: (a) => a.id, right: true },
          { title: 'NAME', value: (a) => a.name },
          { title: 'ROLE', value: (a) => a.role },
          { title: 'BALANCE', value: (a) => a.balance, right: true },
          { title: 'ACTIVE', value: (a) => a.active },
          { title: 'PARENT', value: (a) => a.parentId, right: true },
          { title: 'CREATED (UTC)', value: (a) => minute(a.createdAt) },
        ],
        'account',
        page.skip ?? 0,
      );
    }
    case 'account deactivate':
      return ops.setAccountActive(id(values, 'account'), false);
    case 'account activate':
      return ops.setAccountActive(id(values, 'account'), true);
    case 'account rate-limit': {
      const account = id(values, 'account');
      const given = [values['per-second'] !== undefined, values.off === true, values.default === true].filter(Boolean).length;
      if (given > 1) throw new DomainError('VALIDATION', 'give one of --per-second N, --off, --default');
      if (given === 0) return ops.getRateLimit(account);
      if (values.off) return ops.setRateLimit(account, 'off');
      if (values.default) return ops.setRateLimit(account, 'default');
      const text = values['per-second'] ?? '';
      const n = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < 1) throw new DomainError('VALIDATION', '--per-second must be a positive integer (or use --off)');
      return ops.setRateLimit(account, n);
    }
    case 'key issue':
      return ops.issueKey(id(values, 'account'), values['allowed-ip']);
    case 'key list': {
      const page = paging(values);
      return new Listing(
        await ops.listKeys(id(values, 'account'), page),
        [
          { title: 'ID', value: (k) => k.id, right: true },
          { title: 'KEY', value: (k) => (k.hint === null ? '(not kept)' : `…${k.hint}`) },
          { title: 'CREATED (UTC)', value: (k) => minute(k.createdAt) },
          { title: 'REVOKED (UTC)', value: (k) => minute(k.revokedAt) },
          { title: 'ALLOWED IPS', value: (k) => (k.allowedIps === null ? 'any' : k.allowedIps.join(',')) },
        ],
        'key',
        page.skip ?? 0,
      );
    }
    case 'key revoke':
      await ops.revokeKey(id(values, 'key'));
      return { revoked: true };
    case 'credits add':
      return ops.addCredits(id(values, 'account'), need(values, 'amount'), values.reason);
    case 'route create':
      return ops.createRoute({
        displayName: need(values, 'name'),
        productName: values.product ?? 'SMS',
        productId: Number(values['product-id'] ?? 1),
        farePrice: need(values, 'price'),
        replyFarePrice: need(values, 'reply-price'),
        channel: (values.channel ?? 'SMS') as 'SMS' | 'RCS',
        connector: values.connector ?? 'simulator',
        fallbackRouteId: values['fallback-route'] === undefined ? null : id(values, 'fallback-route'),
      });
    case 'route fallback':
      return ops.setRouteFallback(id(values, 'route'), need(values, 'fallback-route') === 'none' ? null : id(values, 'fallback-route'));
    case 'route list': {
      const page = paging(values);
      const data = values.account === undefined ? await ops.listRoutes(page) : await ops.listAccountRoutes(id(values, 'account'), page);
      return new Listing(
        data,
        [
          { title: 'ID', value: (r) => r.id, right: true },
          { title: 'NAME', value: (r) => r.displayName },
          { title: 'CHANNEL', value: (r) => r.channel },
          { title: 'CONNECTOR', value: (r) => r.connector },
          { title: 'PRICE', value: (r) => r.farePrice, right: true },
          { title: 'REPLY', value: (r) => r.replyFarePrice, right: true },
          { title: 'PRODUCT', value: (r) => `${r.productName} (${r.productId})` },
          { title: 'FALLBACK', value: (r) => r.fallbackRouteId, right: true },
        ],
        'route',
        page.skip ?? 0,
      );
    }
    case 'route legs': {
      const route = id(values, 'route');
      const legs = values.leg ?? [];
      if (legs.length && values.clear) throw new DomainError('VALIDATION', 'give --leg ... or --clear, not both');
      const data = legs.length || values.clear ? await ops.setRouteLegs(route, legs.map(parseLeg)) : await ops.routeLegs(route);
      return new Listing(
        { records: data.legs, total: data.legs.length },
        [
          { title: 'CONNECTOR', value: (l) => l.connector },
          { title: 'PREFIXES', value: (l) => (l.prefixes.length ? l.prefixes.join(',') : 'any') },
          { title: 'PRIORITY', value: (l) => l.priority, right: true },
          { title: 'WEIGHT', value: (l) => l.weight, right: true },
        ],
        'leg',
        0,
      );
    }
    case 'route grant':
      await ops.grantRoute(id(values, 'account'), id(values, 'route'));
      return { granted: true };
    case 'group create':
      return ops.createContactGroup(id(values, 'account'), need(values, 'name'), null, values.number ?? []);
    case 'group import':
      return importCsvFile(ops, id(values, 'account'), need(values, 'name'), need(values, 'csv'));
    case 'cluster': {
      const view = await ops.cluster();
      const processes = new Listing(
        { records: view.processes, total: view.processes.length },
        [
          { title: 'ROLE', value: (p) => p.role },
          { title: 'HOST', value: (p) => p.host },
          { title: 'PID', value: (p) => p.pid, right: true },
          { title: 'STARTED (UTC)', value: (p) => minute(p.startedAt) },
          { title: 'LAST SEEN (UTC)', value: (p) => p.lastSeenAt.slice(0, 19).replace('T', ' ') },
          { title: 'CONNECTORS', value: (p) => (p.connectors.length === 0 ? '(none)' : p.connectors.join(',')) },
        ],
        'process',
        0,
        'processes',
      );
      const outbox = new Listing(
        { records: view.outbox, total: view.outbox.length },
        [
          { title: 'CONNECTOR', value: (o) => o.connector },
          { title: 'QUEUED', value: (o) => o.queued, right: true },
          { title: 'SCHEDULED', value: (o) => o.scheduled, right: true },
          { title: 'SENDING', value: (o) => o.sending, right: true },
        ],
        'outbox connection',
        0,
      );
      return new Sections(view, [processes, outbox]);
    }
    default:
      throw new DomainError('VALIDATION', `unknown command "${command}"\n\n${USAGE}`);
  }
}

async function main() {
  const { values, positionals } = parseArgs({ options, allowPositionals: true, strict: true });
  // backup and restore work on the SQLite file itself, not through the base (src/cli/backup.ts).
  if (!values.help && (positionals[0] === 'backup' || positionals[0] === 'restore')) process.exit(runMaintenance(positionals[0], values));
  const single = positionals[0] === 'cluster';
  if (values.help || (positionals.length < 2 && !single)) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(values.help ? 0 : 64);
  }
  const config = loadConfig();
  // The database and what the operator's use cases need, nothing of the sending machinery (src/base.ts).
  const base = await openBase(config, pino({ level: 'warn' }));
  try {
    const result =
      positionals[0] === 'smpp-credential'
        ? await smppCredentialCommand(base.db.kysely, positionals[1], values)
        : positionals[0] === 'panel-user' || positionals[0] === 'operator-user'
          ? await panelUserCommand(base.db.kysely, positionals[0], positionals[1], values)
          : await run(operator(base), positionals.slice(0, single ? 1 : 2).join(' '), values);
    const table = result instanceof Listing || result instanceof Sections;
    if (table && !values.json) process.stdout.write(result.render());
    else process.stdout.write(`${JSON.stringify(table ? result.data : result, null, 2)}\n`);
  } finally {
    await base.close();
  }
}

main().catch((err: unknown) => {
  const text =
    err instanceof DomainError ? err.details.join('\n') : err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err);
  process.stderr.write(`error: ${text}\n`);
  process.exit(err instanceof DomainError || err instanceof ConfigError ? 65 : 1);
});
