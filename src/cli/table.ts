/**
 * A page of a list as the CLI shows it: a text table for people, or with
 * `--json` the use case's answer as it is (`{ records, total }`).
 */
export interface Column<R> {
  title: string;
  value: (record: R) => string | number | boolean | null;
  /** Numbers read better right-aligned. */
  right?: boolean;
}

export class Listing<R> {
  constructor(
    readonly data: { records: R[]; total: number },
    readonly columns: Column<R>[],
    /** What a record is: "account" (an s is added for more than one). */
    readonly what: string,
    readonly skip: number,
    /** When adding an s is wrong ("processes"). */
    readonly plural = `${what}s`,
  ) {}

  render(): string {
    const { records, total } = this.data;
    const rows = records.map((r) => this.columns.map((c) => cell(c.value(r))));
    const titles = this.columns.map((c) => c.title);
    const widths = titles.map((t, i) => Math.max(t.length, ...rows.map((row) => (row[i] ?? '').length)));
    const line = (cells: string[]) =>
      cells
        .map((text, i) => (this.columns[i]?.right ? text.padStart(widths[i] ?? 0) : text.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd();
    const what = total === 1 ? this.what : this.plural;
    const count =
      records.length === total
        ? `${total} ${what}`
        : records.length === 0
          ? `none of ${total} ${what} past --skip ${this.skip}`
          : `${what} ${this.skip + 1}-${this.skip + records.length} of ${total} (--skip, --limit for others)`;
    if (records.length === 0) return `${count}\n`;
    return `${[line(titles), ...rows.map(line)].join('\n')}\n${count}\n`;
  }
}

const MAX_CELL = 40;

/** One line, at most MAX_CELL characters: names may hold anything. */
function cell(value: string | number | boolean | null): string {
  if (value === null) return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  const text = String(value).replace(/\p{Cc}+/gu, ' ');
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
}

/** 2024-05-01T12:34:56.789Z -> 2024-05-01 12:34 (UTC). */
export const minute = (iso: string | null) => (iso === null ? null : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`);

/** Several tables one after the other (`cluster`: processes, then outbox); with `--json` the use case's answer as it is. */
export class Sections {
  constructor(
    readonly data: unknown,
    readonly parts: { render(): string }[],
  ) {}

  render(): string {
    return this.parts.map((p) => p.render()).join('\n');
  }
}
