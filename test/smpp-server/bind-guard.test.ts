import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BindGuard } from '../../src/smpp-server/bind-guard.ts';

const options = { atOnce: 3, perAddress: 2, perAddressPerMinute: 5, failureLimit: 2, failureWindowMs: 60_000, blockMs: 300_000 };

describe('BindGuard', () => {
  test('binds being checked: at most perAddress of one address and atOnce in all; a finished check makes room', () => {
    const guard = new BindGuard(options);
    assert.equal(guard.admit('a', 0), null);
    assert.equal(guard.admit('a', 0), null);
    assert.match(guard.admit('a', 0) ?? '', /2 binds from this address are being checked/);
    assert.equal(guard.admit('b', 0), null);
    assert.match(guard.admit('c', 0) ?? '', /3 binds are being checked/);
    guard.done('a', false, 1);
    assert.equal(guard.admit('c', 1), null);
  });

  test('attempts a minute are counted when they come, refused ones included, and start again the next minute', () => {
    const guard = new BindGuard({ ...options, perAddress: 1 });
    assert.equal(guard.admit('a', 0), null);
    for (let i = 0; i < 4; i++) assert.match(guard.admit('a', 0) ?? '', /being checked/);
    guard.done('a', false, 0);
    assert.match(guard.admit('a', 10) ?? '', /more than 5 binds a minute/);
    assert.equal(guard.admit('a', 60_000), null);
  });

  test('failureLimit failures within the window block the address for blockMs; a failure outside the window starts a new count', () => {
    const guard = new BindGuard(options);
    assert.equal(guard.admit('a', 0), null);
    assert.equal(guard.done('a', true, 0), false);
    assert.equal(guard.admit('a', 70_000), null);
    assert.equal(guard.done('a', true, 70_000), false, 'the first failure is past the window');
    assert.equal(guard.admit('a', 71_000), null);
    assert.equal(guard.done('a', true, 71_000), true, 'blocked');
    assert.match(guard.admit('a', 72_000) ?? '', /too many failed binds/);
    assert.equal(guard.admit('b', 72_000), null, 'another address is not');
    assert.equal(guard.admit('a', 71_000 + 300_000), null, 'after blockMs');
  });
});
