import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sizedChunks } from '../src/db/bulk.ts';

/**
 * Set-based statements are cut into chunks of a few sizes (src/db/bulk.ts),
 * so that a shape has a dozen statement texts at most, whatever the batch
 * sizes of a load.
 */
test('chunks: every item once, in order; sizes powers of two, none over the limit; a dozen sizes over any batch size', () => {
  const sizes = new Set<number>();
  for (const max of [1, 500, 512, 1111]) {
    for (let n = 0; n <= 2100; n++) {
      const items = Array.from({ length: n }, (_, i) => i);
      const chunks = [...sizedChunks(items, max)];
      assert.deepEqual(chunks.flat(), items, `n=${n}, max=${max}`);
      for (const chunk of chunks) {
        assert.ok(chunk.length <= max, `n=${n}: a chunk of ${chunk.length} over ${max}`);
        assert.equal(chunk.length & (chunk.length - 1), 0, `n=${n}: ${chunk.length} is no power of two`);
        if (max === 512) sizes.add(chunk.length);
      }
      // Largest first: as few statements as the sizes allow.
      for (let i = 1; i < chunks.length; i++) assert.ok((chunks[i] as number[]).length <= (chunks[i - 1] as number[]).length);
    }
  }
  assert.deepEqual(
    [...sizes].sort((a, b) => a - b),
    [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
  );
});
