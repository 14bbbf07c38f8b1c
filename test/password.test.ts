import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashing, hashPassword, verifyPassword } from '../src/childusers/password.ts';

test('at most two password hashes run at once (the thread pool stays free for fsyncs); the others wait their turn and all are answered', async () => {
  const stored = await hashPassword('correct horse battery');
  const checks = Array.from({ length: 6 }, (_, i) => verifyPassword(i === 0 ? 'correct horse battery' : `wrong ${i}`, stored));
  await new Promise(setImmediate);
  assert.ok(hashing.activeCount <= 2, `${hashing.activeCount} hashes at once`);
  // A hash takes tens of milliseconds at least (32 MiB of scrypt): most are still waiting here.
  assert.ok(hashing.pendingCount >= 1, 'the rest wait');
  assert.deepEqual(await Promise.all(checks), [true, false, false, false, false, false]);
  assert.equal(hashing.activeCount + hashing.pendingCount, 0);
});
