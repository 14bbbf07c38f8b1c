import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse as parseCsv } from 'csv-parse/sync';
import pino from 'pino';
import { ConfigError, loadConfig } from '../config.ts';
import { createCore } from '../core.ts';
import { operator, type Operator } from '../operator.ts';
import { DomainError } from '../common/errors.ts';

const USAGE = `Operator CLI (same use cases as the /admin API)

  account create --name NAME [--role CUSTOMER|RESELLER] [--timezone TZ] [--balance N]
  account show --account ID
  key issue --account ID [--allowed-ip CIDR ...]
  key revoke --key ID
  credits add --account ID --amount N [--reason TEXT]
  route create --name NAME --price N --reply-price N [--product NAME] [--product-id N] [--channel SMS|RCS] [--connector NAME] [--fallback-route ID]
  route fallback --route ID --fallback-route ID|none   (an RCS route's SMS route for phones without RCS)
  route grant --account ID --route ID
  group create --account ID --name NAME [--number PHONE ...]
  group import --account ID --name NAME --csv FILE   (first column: phone; optional second column: name; a header row is skipped)

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
  number: { type: 'string', multiple: true },
  csv: { type: 'string' },
  help: { type: 'boolean' },
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

/** Phones (and names) from a CSV file; a first row without digits is a header. */
export function readNumbersCsv(text: string): { phone: string; name: string | null }[] {
  const rows = parseCsv(text, { relax_column_count: true, skip_empty_lines: true, trim: true }) as string[][];
  const body = rows.length && !/\d/.test(rows[0]?.[0] ?? '') ? rows.slice(1) : rows;
  return body.map((r) => ({ phone: r[0] ?? '', name: r[1] ? r[1] : null }));
}

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
    case 'key issue':
      return ops.issueKey(id(values, 'account'), values['allowed-ip']);
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
    case 'route grant':
      await ops.grantRoute(id(values, 'account'), id(values, 'route'));
      return { granted: true };
    case 'group create':
      return ops.createContactGroup(id(values, 'account'), need(values, 'name'), null, values.number ?? []);
    case 'group import': {
      const contacts = readNumbersCsv(readFileSync(need(values, 'csv'), 'utf8'));
      return ops.importContactGroup(id(values, 'account'), need(values, 'name'), contacts);
    }
    default:
      throw new DomainError('VALIDATION', `unknown command "${command}"\n\n${USAGE}`);
  }
}

async function main() {
  const { values, positionals } = parseArgs({ options, allowPositionals: true, strict: true });
  if (values.help || positionals.length < 2) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(values.help ? 0 : 64);
  }
  const config = loadConfig();
  const core = await createCore(config, pino({ level: 'warn' }), { dispatch: false });
  try {
    const result = await run(operator(core), positionals.slice(0, 2).join(' '), values);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await core.close();
  }
}

main().catch((err: unknown) => {
  const text =
    err instanceof DomainError ? err.details.join('\n') : err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err);
  process.stderr.write(`error: ${text}\n`);
  process.exit(err instanceof DomainError || err instanceof ConfigError ? 65 : 1);
});
