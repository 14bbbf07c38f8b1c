import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contactsFromCsv } from '../web/src/csv.ts';
import { countText, parseNumbers } from '../web/src/sms.ts';
import { chargedSegments } from '../src/billing/segments.ts';

/*
 * The panel's own rules, without a browser: the send form's live count
 * (parts on the wire: 160/153 in the GSM 7-bit alphabet, 70/67 in UCS-2;
 * credits: the gateway's charging rule) and the contact CSV reader.
 */

test('GSM 7-bit texts: 160 characters in one part, then 153 per part; extension characters take two', () => {
  assert.deepEqual(countText('a'.repeat(160)), { characters: 160, encoding: 'GSM-7', parts: 1, charged: 1 });
  assert.deepEqual(countText('a'.repeat(161)), { characters: 161, encoding: 'GSM-7', parts: 2, charged: 2 });
  assert.deepEqual(countText('a'.repeat(306)), { characters: 306, encoding: 'GSM-7', parts: 2, charged: 2 });
  assert.deepEqual(countText('a'.repeat(307)), { characters: 307, encoding: 'GSM-7', parts: 3, charged: 3 });
  // € is an extension character: 159 + 2 septets do not fit one part, though 160 characters are charged as one.
  assert.deepEqual(countText(`${'a'.repeat(159)}€`), { characters: 160, encoding: 'GSM-7', parts: 2, charged: 1 });
  assert.equal(countText('Olá').encoding, 'UCS-2', 'á is not in the GSM 7-bit alphabet');
  assert.equal(countText('Você está à vontade? ÄÖÑÜ').encoding, 'UCS-2');
  assert.equal(countText('Ação à vista: àèéìòù ÄÖÑÜ äöñü ß').encoding, 'UCS-2');
  assert.equal(countText('à bientôt').encoding, 'UCS-2', 'ô is not either');
  assert.equal(countText('àèéìòù ÄÖÑÜäöñü ßÉ £$¥').encoding, 'GSM-7');
});

test('UCS-2 texts: 70 in one part, then 67 per part; charged by the gateway rule whatever the encoding', () => {
  assert.deepEqual(countText('ç'.repeat(70)), { characters: 70, encoding: 'UCS-2', parts: 1, charged: 1 });
  assert.deepEqual(countText('ç'.repeat(71)), { characters: 71, encoding: 'UCS-2', parts: 2, charged: 1 });
  assert.deepEqual(countText('ç'.repeat(135)), { characters: 135, encoding: 'UCS-2', parts: 3, charged: 1 });
  // An emoji is one character to the charging rule and two UTF-16 units on the wire.
  assert.deepEqual(countText('📦'.repeat(36)), { characters: 36, encoding: 'UCS-2', parts: 2, charged: 1 });
  for (const text of ['x', 'a'.repeat(160), 'a'.repeat(161), 'ç'.repeat(200), '📦'.repeat(170), 'b'.repeat(460)])
    assert.equal(countText(text).charged, chargedSegments(text), `the form charges what the gateway charges (${text.length})`);
  assert.deepEqual(countText(''), { characters: 0, encoding: 'GSM-7', parts: 0, charged: 0 });
});

test('numbers typed or pasted with any separator', () => {
  assert.deepEqual(parseNumbers('5511999998888, 5521988887777\n+5531977776666;  5541966665555'), [
    '5511999998888',
    '5521988887777',
    '+5531977776666',
    '5541966665555',
  ]);
  assert.deepEqual(parseNumbers(' \n '), []);
});

test('contacts from a CSV file: the phone column found, a name beside it, headers and blank lines skipped', () => {
  const csv = 'name,phone\r\nAna,11977771234\r\n"Souza, Bia",(21) 97777-5678\r\n\r\n31977779999\r\n';
  assert.deepEqual(contactsFromCsv(csv), [{ phone: '11977771234', name: 'Ana' }, { phone: '21977775678', name: 'Souza, Bia' }, { phone: '31977779999' }]);
  assert.deepEqual(contactsFromCsv('telefone;nome\n11977771234;Ana\n'), [{ phone: '11977771234', name: 'Ana' }]);
});
