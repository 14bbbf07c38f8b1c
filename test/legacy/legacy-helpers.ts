import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify';
import type { Core } from '../../src/core.ts';
import { legacyPlugin, type LegacyOptions } from '../../src/http/legacy/plugin.ts';
import type { TestGateway } from '../helpers.ts';

export interface LegacyAnswer {
  status: number;
  /** Parsed JSON, or the raw text when the body is not JSON ('' for an empty body). */
  body: any;
  raw: string;
  headers: Record<string, unknown>;
}

/** A call to the Legacy v2 interface with the `auth-key` header. */
export async function legacy(
  target: TestGateway | FastifyInstance,
  key: string | null,
  method: InjectOptions['method'],
  path: string,
  payload?: unknown,
  headers: Record<string, string> = {},
): Promise<LegacyAnswer> {
  const app = 'app' in target ? target.app : target;
  const all: Record<string, string> = {
    ...(key ? { 'auth-key': key } : {}),
    ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
    ...headers,
  };
  const res = await app.inject({
    method,
    url: `/api/v2${path}`,
    headers: all,
    ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
  });
  let body: unknown = res.body;
  try {
    body = res.body ? JSON.parse(res.body) : '';
  } catch {
    /* keep the text */
  }
  return { status: res.statusCode, body, raw: res.body, headers: res.headers as Record<string, unknown> };
}

/** A second app with only the legacy interface over an existing core, to set its limits and clock. */
export async function legacyApp(core: Core, options: Omit<LegacyOptions, 'core'>): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  await app.register(legacyPlugin, { prefix: '/api/v2', core, ...options });
  await app.ready();
  return app;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The account's messages, straight from the database (no report rate limit). */
export async function messagesOf(gw: TestGateway, accountId: number) {
  await gw.core.settle();
  return gw.core.db.kysely
    .selectFrom('messages')
    .innerJoin('requests', 'requests.id', 'messages.request_id')
    .select([
      'messages.id',
      'messages.request_id',
      'messages.receiver',
      'messages.content',
      'messages.status',
      'messages.cost',
      'messages.sender',
      'requests.source',
    ])
    .where('messages.account_id', '=', accountId)
    .orderBy('messages.created_at')
    .orderBy('messages.id')
    .execute();
}

export async function balanceOf(gw: TestGateway, accountId: number): Promise<number> {
  await gw.core.settle();
  const row = await gw.core.db.kysely.selectFrom('accounts').select('balance').where('id', '=', accountId).executeTakeFirstOrThrow();
  return row.balance / 1_000_000;
}
