/**
 * User Data Header (3GPP TS 23.040 §9.2.3.24) building and parsing, for
 * concatenated messages: IEI 0x00 (8-bit reference) and 0x08 (16-bit).
 */

/** Concatenation info of one part. */
export interface ConcatInfo {
  reference: number;
  total: number;
  /** 1-based part number. */
  sequence: number;
}

export interface ParsedUdh {
  /** Octets taken by the header, length octet included. */
  length: number;
  concat: ConcatInfo | null;
  /** The body after the header. */
  body: Buffer;
}

/** `05 00 03 ref total seq`: UDH of part `sequence` of `total` with an 8-bit reference. */
export function concatUdh(reference: number, total: number, sequence: number): Buffer {
  return Buffer.from([0x05, 0x00, 0x03, reference & 0xff, total, sequence]);
}

/**
 * Parses the UDH at the start of a body whose esm_class has the UDHI bit.
 * Returns null when the header is malformed (overruns the body, an element
 * overruns the header, or a concatenation element has bad length/values),
 * so callers can refuse it (simulator) or treat the body as plain (connector).
 */
export function parseUdh(bytes: Buffer): ParsedUdh | null {
  const udhl = bytes[0];
  if (udhl === undefined || udhl + 1 > bytes.length) return null;
  let concat: ConcatInfo | null = null;
  let offset = 1;
  const end = udhl + 1;
  while (offset < end) {
    const iei = bytes[offset];
    const len = bytes[offset + 1];
    if (iei === undefined || len === undefined || offset + 2 + len > end) return null;
    const data = bytes.subarray(offset + 2, offset + 2 + len);
    if (iei === 0x00 || iei === 0x08) {
      const wide = iei === 0x08;
      if (data.length !== (wide ? 4 : 3)) return null;
      const reference = wide ? data.readUInt16BE(0) : (data[0] ?? 0);
      const total = data[wide ? 2 : 1] ?? 0;
      const sequence = data[wide ? 3 : 2] ?? 0;
      if (total < 1 || sequence < 1 || sequence > total) return null;
      concat = { reference, total, sequence };
    }
    offset += 2 + len;
  }
  return { length: end, concat, body: bytes.subarray(end) };
}
