import { join } from 'node:path';
import Fastify from 'fastify';
import SQLite from 'better-sqlite3';
import pino from 'pino';
import { openDatabase } from '../src/db/database.ts';
import { WalSync } from '../src/db/wal-sync.ts';
import { newId } from '../src/common/ids.ts';

/**
 * The durable floor: the least a gateway that loses no accepted request has
 * to do for POST /messages/sms/send, and nothing more. The bare endpoint of
 * bare-server.ts plus, per request, the rows the gateway's accept writes
 * (request, message, ledger entry, the balance), in the gateway's own schema
 * (its migrations, so the same indexes), one transaction per turn of the
 * event loop (group commit), answered once an fsync of the WAL that started
 * after the commit is done, as the gateway does. No API key, no validation,
 * no dispatch: a reference for what durability alone costs on this machine.
 */
const dataDir = process.env.GATEWAY_DATA_DIR;
if (!dataDir) throw new Error('GATEWAY_DATA_DIR is required');
const schema = await openDatabase({ dataDir }); // creates the gateway's tables
await schema.close();

const path = join(dataDir, 'gateway.sqlite');
const db = new SQLite(path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
const wal = new WalSync(`${path}-wal`);
const now = Date.now();
const accountId = Number(
  db.prepare("insert into accounts (name, role, timezone, balance, active, created_at) values ('Floor', 'CUSTOMER', 'UTC', 1e15, 1, ?)").run(now)
    .lastInsertRowid,
);
const routeId = Number(
  db
    .prepare(
      "insert into routes (display_name, product_name, product_id, fare_price, reply_fare_price, channel, connector, created_at) values ('Sim', 'SMS', 1, 10000, 0, 'SMS', 'simulator', ?)",
    )
    .run(now).lastInsertRowid,
);

const insertRequest =
  db.prepare(`insert into requests (id, account_id, route_id, channel, product, content, tag, custom, sender, source, message_count, cost, schedule_at, created_at)
  values (?, ?, ?, 'SMS', 'SMS', ?, null, null, null, 'gateway', 1, 10000, ?, ?)`);
const insertMessage =
  db.prepare(`insert into messages (id, account_id, request_id, route_id, connector, channel, receiver, content, payload, segments, cost, status, status_details,
  tag, custom, sender, created_at, schedule_at, due_at, lease_owner, attempts, sent_at, carrier_id, status_at)
  values (?, ?, ?, ?, 'simulator', 'SMS', ?, ?, null, 1, 10000, 'QUEUED', null, null, null, null, ?, ?, ?, null, 0, null, null, ?)`);
const insertLedger = db.prepare("insert into ledger (account_id, amount, reason, request_id, created_at) values (?, -10000, 'send', ?, ?)");
const debit = db.prepare('update accounts set balance = balance - ? where id = ?');

interface Send {
  receivers: unknown[];
  message: string;
}
const write = db.transaction((bodies: Send[]) => {
  const at = Date.now();
  for (const body of bodies) {
    const requestId = newId();
    insertRequest.run(requestId, accountId, routeId, body.message, at, at);
    insertMessage.run(newId(), accountId, requestId, routeId, String(body.receivers[0]), body.message, at, at, at, at);
    insertLedger.run(accountId, requestId, at);
  }
  debit.run(bodies.length * 10000, accountId);
});

let batch: { body: Send; done: () => void }[] = [];
function accept(body: Send): Promise<void> {
  return new Promise((done) => {
    if (batch.length === 0) {
      setImmediate(() => {
        const items = batch;
        batch = [];
        write(items.map((i) => i.body));
        void wal.sync().then(() => {
          for (const i of items) i.done();
        });
      });
    }
    batch.push({ body, done });
  });
}

const app = Fastify({ logger: false });
app.post<{ Body: Send }>('/messages/sms/send', async (request) => {
  await accept(request.body);
  return { hasError: false, message: 'Accepted 1 message(s), 1 credit(s).', totalRecords: 0, errors: [], object: null };
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
pino().info({ address }, 'gateway listening');
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => wal.close())
      .then(() => process.exit(0)),
);
