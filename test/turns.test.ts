import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ACCOUNTS_A_CLAIM, VISITS_A_CLAIM, takeTurns, type Turns } from '../src/common/turns.ts';

/** Accounts taking turns (src/common/turns.ts) over an in-memory queue: account id -> its due rows (none: waiting for later). */
function queue(rows: Record<number, string[]>): Turns<string> & { looked: number[] } {
  const accounts = Object.keys(rows)
    .map(Number)
    .sort((a, b) => a - b);
  const looked: number[] = [];
  return {
    looked,
    next: async (from) => accounts.find((a) => a > from),
    take: async (account, count) => {
      looked.push(account);
      return (rows[account] ?? []).slice(0, count);
    },
  };
}

test('from the account after the last one, wrapping round once, each up to its share', async () => {
  const q = queue({ 1: ['1a', '1b'], 4: ['4a', '4b', '4c'], 9: ['9a'] });
  const { rows, last } = await takeTurns(q, 4, 16);
  assert.deepEqual(q.looked, [9, 1, 4]);
  assert.deepEqual(rows, ['9a', '1a', '1b', '4a', '4b']);
  assert.equal(last, 4);
});

test('a room of one: one account a claim, the next claim the next account', async () => {
  const q = queue({ 2: ['2a', '2b'], 3: ['3a'] });
  const first = await takeTurns(q, 0, 1);
  assert.deepEqual(first, { rows: ['2a'], last: 2 });
  const second = await takeTurns(q, first.last ?? 0, 1);
  assert.deepEqual(second, { rows: ['3a'], last: 3 });
  assert.deepEqual((await takeTurns(q, second.last ?? 0, 1)).rows, ['2a']);
});

test('at most ACCOUNTS_A_CLAIM accounts served, the next claim goes on after the last', async () => {
  const rows: Record<number, string[]> = {};
  for (let a = 1; a <= ACCOUNTS_A_CLAIM + 3; a++) rows[a] = [`${a}a`, `${a}b`, `${a}c`];
  const q = queue(rows);
  const first = await takeTurns(q, 0, 1000);
  assert.equal(first.rows.length, ACCOUNTS_A_CLAIM * 3);
  assert.equal(first.last, ACCOUNTS_A_CLAIM);
  const second = await takeTurns(q, first.last ?? 0, 1000);
  assert.deepEqual(second.rows.slice(0, 9), ['9a', '9b', '9c', '10a', '10b', '10c', '11a', '11b', '11c']);
});

test('accounts with nothing due are looked at, at most VISITS_A_CLAIM a claim, and passed', async () => {
  const rows: Record<number, string[]> = {};
  for (let a = 1; a <= VISITS_A_CLAIM + 10; a++) rows[a] = [];
  rows[VISITS_A_CLAIM + 5] = ['due'];
  const q = queue(rows);
  const first = await takeTurns(q, 0, 10);
  assert.deepEqual(first, { rows: [], last: VISITS_A_CLAIM });
  assert.deepEqual((await takeTurns(q, first.last ?? 0, 10)).rows, ['due']);
});

test('an empty queue: nothing, and no account to go on from', async () => {
  assert.deepEqual(await takeTurns(queue({}), 7, 10), { rows: [], last: undefined });
});
