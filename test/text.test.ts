/** Texts no store keeps as sent: refused from clients, cleaned from carriers (src/common/text.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storableText, unstorable } from '../src/common/text.ts';

test('a NUL or half of a surrogate pair alone is unstorable; whole pairs, emoji and accents are not', () => {
  assert.equal(unstorable('a\u0000b'), 'nul');
  assert.equal(unstorable('\ud800'), 'surrogate');
  assert.equal(unstorable('x\udfff'), 'surrogate');
  assert.equal(unstorable('\udfff\ud800'), 'surrogate', 'a low half before a high one is no pair');
  for (const fine of ['', 'olá, ação!', '😀', 'a😀b👍🏽', '\u202e\ufeff', '€{}[]']) assert.equal(unstorable(fine), null, fine);
});

test("a carrier's text is made storable: NULs dropped, lone halves of pairs replaced by U+FFFD, the rest untouched", () => {
  assert.equal(storableText('a\u0000b'), 'ab');
  assert.equal(storableText('a\ud83db\ude00'), 'a\ufffdb\ufffd');
  assert.equal(storableText('ok 😀'), 'ok 😀');
  assert.equal(unstorable(storableText('\u0000\ud800\udfff\udfff')), null);
});
