import { readFileSync } from 'node:fs';

/** CPU seconds (user + system, all threads) a process has used: /proc/PID/stat fields 14 and 15, in clock ticks of 1/100 s. */
export function cpuOf(pid: number): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Peak resident memory of a process, MB. */
export function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}
