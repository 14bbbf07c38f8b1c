/**
 * What a text costs and how it travels. Charging (the gateway's rule):
 * up to 160 characters is one credit, longer texts one per 153, counted in
 * characters whatever the encoding. On the wire a text in the GSM 7-bit
 * alphabet is 160 characters in one part, 153 per part when split; any
 * other character makes it UCS-2: 70 in one part, 67 per part.
 */
const GSM_BASIC = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENDED = '^{}\\[~]|€\f';

export interface TextCount {
  characters: number;
  encoding: 'GSM-7' | 'UCS-2';
  /** Parts on the wire. */
  parts: number;
  /** Credits charged per receiver (one per part of the charging rule). */
  charged: number;
}

export function countText(text: string): TextCount {
  const chars = [...text];
  const gsm = chars.every((c) => GSM_BASIC.includes(c) || GSM_EXTENDED.includes(c));
  let parts: number;
  if (gsm) {
    const septets = chars.reduce((n, c) => n + (GSM_EXTENDED.includes(c) ? 2 : 1), 0);
    parts = septets <= 160 ? 1 : Math.ceil(septets / 153);
  } else {
    const units = text.length; // UTF-16 code units: a character outside the BMP takes two
    parts = units <= 70 ? 1 : Math.ceil(units / 67);
  }
  const charged = chars.length <= 160 ? 1 : Math.ceil(chars.length / 153);
  return { characters: chars.length, encoding: gsm ? 'GSM-7' : 'UCS-2', parts: text ? parts : 0, charged: text ? charged : 0 };
}

/** Phone numbers typed or pasted: any separator (spaces, commas, new lines, semicolons). */
export function parseNumbers(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((n) => n.replace(/[^\d+]/g, ''))
    .filter((n) => n.length > 0);
}
