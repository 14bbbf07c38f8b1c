import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { startGateway, type TestGateway } from './helpers.ts';
import { operator } from '../src/operator.ts';
import { IMPORT_BATCH, INVALID_LISTED, readContactsCsv } from '../src/contacts/import.ts';

/**
 * `group import --csv` streamed (src/contacts/import.ts): batches, the same
 * phone rules as before, the answer and the summary line.
 */

let gw: TestGateway;
before(async () => {
  gw = await startGateway({ GATEWAY_DEMO: 'false' }, { dispatch: false });
});
after(() => gw.close());

const phone = (i: number) => `55119${96000000 + i}`;
const contacts = async (groupId: number) =>
  new Map((await gw.core.db.kysely.selectFrom('contacts').select(['phone', 'name']).where('group_id', '=', groupId).execute()).map((r) => [r.phone, r.name]));

test('a file of several batches: valid numbers stored once, the last name of a repeated one, invalid ones counted and the first listed', async () => {
  const ops = operator(gw.core);
  const account = await ops.createAccount({ name: 'Importer' });
  const existing = await ops.createContactGroup(account.id, 'clients', null, [phone(0)]);
  const valid = IMPORT_BATCH * 2 + 500;
  const invalid = INVALID_LISTED + 200;
  const lines = ['phone,name'];
  for (let i = 0; i < valid; i++) lines.push(`${phone(i)},Name ${i}`);
  for (let i = 0; i < invalid; i++) lines.push(`bad-${i},Nobody`);
  lines.push(`+${phone(1)},Renamed`); // given again, two batches later, with a leading +: the last name wins
  lines.push('', `  ${phone(2)}  ,  Spaces  `); // empty lines skipped, fields trimmed

  const result = await ops.importContactGroup(account.id, 'clients', readContactsCsv(Readable.from(lines.join('\n'))));
  assert.equal(result.id, existing.id, 'the group of that name');
  assert.equal(result.rows, valid + invalid + 2);
  assert.equal(result.added, valid - 1, 'the number already in the group is not added again');
  assert.equal(result.invalidCount, invalid);
  assert.equal(result.invalid.length, INVALID_LISTED);
  assert.deepEqual(result.invalid.slice(0, 2), ['bad-0', 'bad-1']);
  const stored = await contacts(existing.id);
  assert.equal(stored.size, valid);
  assert.equal(stored.get(phone(0)), null, 'a number that was already there keeps its name');
  assert.equal(stored.get(phone(1)), 'Renamed');
  assert.equal(stored.get(phone(2)), 'Spaces');
  assert.equal(stored.get(phone(valid - 1)), `Name ${valid - 1}`);

  // Importing the same file again adds nothing.
  const again = await ops.importContactGroup(account.id, 'clients', readContactsCsv(Readable.from(lines.join('\n'))));
  assert.equal(again.added, 0);
});

test('the same phone rules as a send: without the country code or outside assigned ranges, refused', async () => {
  const ops = operator(gw.core);
  const account = await ops.createAccount({ name: 'Rules' });
  // A byte order mark (spreadsheets write one) and no header row.
  const text = '\uFEFF5511987652003,Ana\n11987652003,Sem DDI\n5511099998888,Inválido\n551133334444,Fixo\n5521987654321,Rio\n';
  const result = await ops.importContactGroup(account.id, 'rules', readContactsCsv(Readable.from(text)));
  assert.deepEqual({ added: result.added, invalid: result.invalid }, { added: 3, invalid: ['11987652003', '5511099998888'] });
});

test('a NUL character in a file (a binary file, a broken export): dropped from the names, a number holding one is invalid; on every database', async () => {
  const ops = operator(gw.core);
  const account = await ops.createAccount({ name: 'Nul' });
  const text = '5511987652003,An\u0000a\n55119876\u000052004,Bad\n5521987654321,\u0000\n';
  const result = await ops.importContactGroup(account.id, 'nul', readContactsCsv(Readable.from(text)));
  assert.deepEqual({ added: result.added, invalid: result.invalid }, { added: 2, invalid: ['55119876\u000052004'] });
  const stored = await contacts(result.id);
  assert.deepEqual([...stored.entries()].sort(), [
    ['5511987652003', 'Ana'],
    ['5521987654321', null],
  ]);
});

test('the CLI: JSON on stdout, one summary line on stderr when stdout is not a terminal', async () => {
  const account = await operator(gw.core).createAccount({ name: 'CLI import' });
  const file = join(gw.config.GATEWAY_DATA_DIR, 'numbers.csv');
  writeFileSync(file, `phone,name\n${phone(10)},A\n${phone(11)},B\nnope,C\n`);
  const res = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'group', 'import', '--account', String(account.id), '--name', 'g', '--csv', file],
    {
      env: { ...process.env, ...gw.db.env, GATEWAY_DEMO: 'false' },
      encoding: 'utf8',
    },
  );
  assert.equal(res.status, 0, res.stderr);
  const out = JSON.parse(res.stdout);
  assert.deepEqual(
    { added: out.added, invalid: out.invalid, invalidCount: out.invalidCount, rows: out.rows },
    { added: 2, invalid: ['nope'], invalidCount: 1, rows: 3 },
  );
  assert.match(res.stderr, /^group import: 3 rows read, 2 added, 1 invalid, in \d+\.\d s\n$/);
  const missing = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'group', 'import', '--account', String(account.id), '--name', 'g', '--csv', `${file}.nope`],
    {
      env: { ...process.env, ...gw.db.env },
      encoding: 'utf8',
    },
  );
  assert.equal(missing.status, 65);
  assert.match(missing.stderr, /no such file/);
});
