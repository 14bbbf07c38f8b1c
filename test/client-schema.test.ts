import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SCHEMA_FILE, clientSchema, openapiDocument } from '../scripts/client-generate.ts';

/*
 * The typed client (clients/typescript/) is generated from the gateway's
 * OpenAPI document: the committed schema.d.ts must be what
 * `npm run client:generate` writes for the document as it is now, so a
 * route changed without regenerating the client fails here.
 */

test('clients/typescript/schema.d.ts is generated from the current OpenAPI document (npm run client:generate)', async () => {
  const expected = await clientSchema(await openapiDocument());
  const committed = readFileSync(SCHEMA_FILE, 'utf8');
  assert.ok(committed === expected, 'clients/typescript/schema.d.ts is stale: run `npm run client:generate` and commit the result');
});

test('the generated schema types every interface: Gateway, Legacy v2 and the operator API', () => {
  const schema = readFileSync(SCHEMA_FILE, 'utf8');
  for (const path of ['"/messages/sms/send"', '"/reports/messages/sent"', '"/api/v2/send"', '"/admin/accounts"', '"/admin/carriers"'])
    assert.ok(schema.includes(path), `${path} in schema.d.ts`);
});
