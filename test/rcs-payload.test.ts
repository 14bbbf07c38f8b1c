import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentOf, fallbackText } from '../src/rcs/payload.ts';
import { isRcsPayload, type RcsCard, type RcsPayload } from '../src/carriers/rcs-message.ts';
import { agentMessage, signBody, signatureValid } from '../src/carriers/rbm/wire.ts';
import { agentMessageProblems } from '../tools/rbm-sim/server.ts';

const media = { url: 'https://gw.example.com/media/abc.jpg', sha256: 'abc', contentType: 'image/jpeg', bytes: 10, sourceUrl: 'https://cdn.example.com/a.jpg' };
const card = (title: string | null, description: string | null, withMedia = true): RcsCard => ({
  title,
  description,
  media: withMedia ? media : null,
  suggestions: [
    { text: 'Site', url: 'https://example.com/s' },
    { text: 'Ok', url: null },
  ],
});

const samples: RcsPayload[] = [
  { kind: 'basic', text: 'hello' },
  { kind: 'file', fileName: 'doc.pdf', media: { ...media, contentType: 'application/pdf' } },
  { kind: 'card', card: card('Title', 'Text') },
  { kind: 'carousel', cards: [card('A', null), card(null, 'B', false)] },
];

test('readable content: message, file name, card title, carousel of N cards', () => {
  assert.deepEqual(samples.map(contentOf), ['hello', 'doc.pdf', 'Title', 'carousel of 2 cards']);
  assert.equal(contentOf({ kind: 'card', card: card(null, 'only text') }), 'only text');
});

test('SMS fallback text: title, message and each button URL', () => {
  assert.equal(fallbackText({ kind: 'basic', text: 'hello' }), 'hello');
  assert.equal(fallbackText({ kind: 'card', card: card('Title', 'Text') }), 'Title\nText\nSite: https://example.com/s');
  assert.equal(fallbackText({ kind: 'card', card: card(null, null) }), 'Site: https://example.com/s\nhttps://gw.example.com/media/abc.jpg');
  assert.equal(fallbackText(samples[3] as RcsPayload), 'A\nSite: https://example.com/s\n\nB\nSite: https://example.com/s');
});

test('every payload kind becomes an agent message the RBM simulator accepts', () => {
  for (const p of samples) {
    assert.ok(isRcsPayload(JSON.parse(JSON.stringify(p))));
    assert.deepEqual(agentMessageProblems(agentMessage(p)), [], p.kind);
  }
  assert.equal(isRcsPayload({ kind: 'sms' }), false);
  assert.equal(isRcsPayload(null), false);
});

test('webhook signatures: base64 HMAC-SHA512 of the raw body', () => {
  const body = Buffer.from('{"a":1}');
  assert.ok(signatureValid('s', body, signBody('s', body)));
  assert.equal(signatureValid('s', body, signBody('t', body)), false);
  assert.equal(signatureValid('s', body, undefined), false);
  assert.equal(signatureValid('s', body, 'short'), false);
});
