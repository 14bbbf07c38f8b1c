import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GroupCommitter } from '../src/db/group-commit.ts';

test('a batch takes the waiting items up to the row bound (at least one item), in order', async () => {
  const batches: number[][] = [];
  const committer = new GroupCommitter<number, number>(
    async (items) => {
      batches.push(items);
      return items;
    },
    500,
    2,
    { of: (rows) => rows, max: 2000 },
  );
  const sizes = [1500, 600, 100, 3000, 10, 20];
  const answers = await Promise.all(sizes.map((n) => committer.submit(n)));
  assert.deepEqual(answers, sizes);
  assert.deepEqual(batches, [[1500], [600, 100], [3000], [10, 20]]);
});

test('without a row bound, a batch takes up to maxBatch items', async () => {
  const batches: number[][] = [];
  const committer = new GroupCommitter<number, number>(async (items) => {
    batches.push(items);
    return items;
  }, 3);
  await Promise.all([1, 2, 3, 4, 5].map((n) => committer.submit(n)));
  assert.deepEqual(batches, [
    [1, 2, 3],
    [4, 5],
  ]);
});
