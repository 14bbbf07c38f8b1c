/** Rows of a CSV file: commas or semicolons, double-quoted fields. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const sep = (text.split('\n')[0] ?? '').includes(';') && !(text.split('\n')[0] ?? '').includes(',') ? ';' : ',';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === sep) {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      if (row.some((f) => f.trim())) rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  row.push(field);
  if (row.some((f) => f.trim())) rows.push(row);
  return rows;
}

/** Contacts of a CSV: the first column with a phone number in it, and a name from another column when there is one. */
export function contactsFromCsv(text: string): { phone: string; name?: string }[] {
  const out: { phone: string; name?: string }[] = [];
  for (const row of parseCsv(text)) {
    const phoneAt = row.findIndex((f) => /^\+?[\d\s().-]{8,20}$/.test(f.trim()));
    if (phoneAt < 0) continue; // a header or an empty line
    const phone = (row[phoneAt] ?? '').replace(/\D/g, '');
    const name = row.find((f, i) => i !== phoneAt && f.trim() && !/^\+?[\d\s().-]+$/.test(f.trim()))?.trim();
    out.push(name ? { phone, name } : { phone });
  }
  return out;
}
