import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validate, version } from 'uuid';
import { newId } from '../src/common/ids.ts';

describe('newId', () => {
  it('makes valid UUID v7 ids, strictly increasing within a millisecond and across', () => {
    const ids = Array.from({ length: 20_000 }, newId);
    for (const id of ids) {
      assert.ok(validate(id), id);
      assert.equal(version(id), 7);
    }
    for (let i = 1; i < ids.length; i++) assert.ok((ids[i - 1] ?? '') < (ids[i] ?? ''), `${ids[i - 1]} then ${ids[i]}`);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('carries the creation time in its first 48 bits', () => {
    const before = Date.now();
    const id = newId();
    const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    assert.ok(ms >= before && ms <= Date.now() + 1, `${ms} outside [${before}, now]`);
  });
});
