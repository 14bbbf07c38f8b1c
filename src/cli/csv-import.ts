import { createReadStream, statSync } from 'node:fs';
import type { Operator } from '../operator.ts';
import { readContactsCsv } from '../contacts/import.ts';
import { DomainError } from '../common/errors.ts';

/**
 * `group import --csv FILE`: the file is streamed into the group
 * (src/contacts/import.ts), never read whole. On a terminal a progress bar
 * (share of the file read, rows, rate) is redrawn on stdout; otherwise one
 * summary line goes to stderr at the end, and stdout carries only the JSON
 * answer, for scripts.
 */
export async function importCsvFile(ops: Operator, accountId: number, name: string, file: string) {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (err) {
    throw new DomainError('VALIDATION', `--csv ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  const input = createReadStream(file);
  const started = Date.now();
  const bar = process.stdout.isTTY ? new ProgressBar(size, started) : null;
  const result = await ops.importContactGroup(accountId, name, readContactsCsv(input), (p) => bar?.draw(input.bytesRead, p.rows, p.added, p.invalid));
  const seconds = (Date.now() - started) / 1000;
  const summary = `group import: ${fmt(result.rows)} rows read, ${fmt(result.added)} added, ${fmt(result.invalidCount)} invalid, in ${seconds.toFixed(1)} s`;
  if (bar) bar.done(summary);
  else process.stderr.write(`${summary}\n`);
  return result;
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** One line, redrawn at most ten times a second: `[#######.............]  35%  350,000 rows  62,000 rows/s`. */
class ProgressBar {
  private last = 0;
  constructor(
    private readonly size: number,
    private readonly started: number,
  ) {}

  draw(bytes: number, rows: number, added: number, invalid: number): void {
    const now = Date.now();
    if (now - this.last < 100) return;
    this.last = now;
    const share = this.size > 0 ? Math.min(1, bytes / this.size) : 1;
    const width = 30;
    const full = Math.round(share * width);
    const rate = rows / Math.max(0.001, (now - this.started) / 1000);
    process.stdout.write(
      `\r[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${String(Math.round(share * 100)).padStart(3)}%  ${fmt(rows)} rows  ${fmt(added)} added  ${fmt(invalid)} invalid  ${fmt(Math.round(rate))} rows/s\u001b[K`,
    );
  }

  done(summary: string): void {
    process.stdout.write(`\r${summary}\u001b[K\n`);
  }
}
