import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Db } from '../src/db/database.ts';
import type { MessageStatus } from '../src/db/tables.ts';
import { acceptJob } from '../src/messaging/accept.ts';
import { waitingMessages } from '../src/messaging/outbox.ts';
import { insertTestAccount, insertTestRoute, oneSms, withFreshStore } from './helpers.ts';

/**
 * The outbox depth (`gateway_outbox_messages`, GET /admin/cluster): waiting
 * messages per connection and status, every account's, finished ones left
 * out, a status with none left out (src/messaging/outbox.ts).
 */
let db: Db;

withFreshStore((opened) => {
  db = opened;
});

test('waiting messages are counted per connection and status, across accounts, finished ones not', async () => {
  const accounts = [await insertTestAccount(db, 'One'), await insertTestAccount(db, 'Two')];
  const routes = { a: await insertTestRoute(db, 'carrier-a'), b: await insertTestRoute(db, 'carrier-b') };
  // [route, status, how many]: spread over both accounts.
  const wanted: [keyof typeof routes, MessageStatus, number][] = [
    ['a', 'QUEUED', 5],
    ['a', 'SCHEDULED', 2],
    ['a', 'SENDING', 3],
    ['a', 'SENT', 4],
    ['a', 'DELIVERED', 6],
    ['b', 'SENDING', 1],
    ['b', 'FAILED', 2],
  ];
  let phone = 5511970000000;
  for (const [route, status, count] of wanted) {
    for (let i = 0; i < count; i++) {
      const receiver = String(phone++);
      const [result] = await db.run(acceptJob, [oneSms(accounts[i % 2] as number, routes[route], receiver)]);
      assert.ok(result && !('refused' in result));
      await db.kysely.updateTable('messages').set({ status }).where('receiver', '=', receiver).execute();
    }
  }

  const counted = (await waitingMessages(db.kysely)).sort((x, y) => `${x.connector}${x.status}`.localeCompare(`${y.connector}${y.status}`));
  assert.deepEqual(counted, [
    { connector: 'carrier-a', status: 'QUEUED', n: 5 },
    { connector: 'carrier-a', status: 'SCHEDULED', n: 2 },
    { connector: 'carrier-a', status: 'SENDING', n: 3 },
    { connector: 'carrier-b', status: 'SENDING', n: 1 },
  ]);

  // Nothing waiting: nothing counted.
  await db.kysely.updateTable('messages').set({ status: 'SENT' }).execute();
  assert.deepEqual(await waitingMessages(db.kysely), []);
});
