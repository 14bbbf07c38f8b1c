/** Kannel (bearerbox + smsbox) as a target of `npm run bench:peer`, configured from bench/kannel/kannel.conf. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts, start, until, which } from './proc.ts';
import type { Target } from './target.ts';

const HERE = import.meta.dirname;

export const KANNEL_INSTALL = 'apt-get install -y kannel   (Debian/Ubuntu; Kannel 1.4.5: bearerbox and smsbox)';

/** bearerbox and smsbox when installed, else null. */
export function kannelPrograms(): { bearerbox: string; smsbox: string } | null {
  const bearerbox = which('bearerbox');
  const smsbox = which('smsbox');
  return bearerbox && smsbox ? { bearerbox, smsbox } : null;
}

/** Sum of the <queued> counts of the bearerbox status: its outgoing queue and the SMSC's. */
export function queuedOf(statusXml: string): number {
  const sms = /<sms>([\s\S]*?)<\/sms>/.exec(statusXml)?.[1] ?? '';
  const sent = /<sent>[\s\S]*?<queued>(\d+)<\/queued>/.exec(sms)?.[1];
  const smscs = [...statusXml.matchAll(/<smsc>([\s\S]*?)<\/smsc>/g)].map((m) => Number(/<queued>(\d+)<\/queued>/.exec(m[1] ?? '')?.[1] ?? 0));
  return Number(sent ?? 0) + smscs.reduce((a, b) => a + b, 0);
}

export async function startKannel(dir: string, sinkPort: number): Promise<Target> {
  const programs = kannelPrograms();
  if (!programs) throw new Error(`Kannel is not installed: ${KANNEL_INSTALL}`);
  const [adminPort, smsboxPort, sendsmsPort] = await freePorts(3);
  const values: Record<string, string> = {
    ADMIN_PORT: String(adminPort),
    SMSBOX_PORT: String(smsboxPort),
    SENDSMS_PORT: String(sendsmsPort),
    SINK_PORT: String(sinkPort),
    DIR: dir,
  };
  const conf = join(dir, 'kannel.conf');
  writeFileSync(
    conf,
    readFileSync(join(HERE, 'kannel.conf'), 'utf8').replace(/\{\{(\w+)\}\}/g, (_, name: string) => values[name] ?? ''),
  );
  const admin = `http://127.0.0.1:${adminPort}`;
  const status = async (): Promise<string> => (await fetch(`${admin}/status.xml?password=bench`)).text();
  const bearerbox = start('bearerbox', programs.bearerbox, [conf], { cwd: dir, log: join(dir, 'bearerbox.out') });
  // The SMSC bind is up ("online") before smsbox starts; then smsbox's HTTP port answers.
  await until('the bearerbox SMPP bind', async () => (/<status>online/.test(await status()) ? true : undefined), 60_000, bearerbox);
  const smsbox = start('smsbox', programs.smsbox, [conf], { cwd: dir, log: join(dir, 'smsbox.out') });
  const url = `http://127.0.0.1:${sendsmsPort}`;
  await until('the smsbox sendsms port', async () => ((await fetch(`${url}/cgi-bin/sendsms`)).status > 0 ? true : undefined), 60_000, smsbox);
  // smsbox is connected to bearerbox when the status lists it.
  await until('smsbox connected to bearerbox', async () => (/<box>[\s\S]*?<type>smsbox<\/type>/.test(await status()) ? true : undefined), 60_000, smsbox);
  return {
    name: 'Kannel',
    url,
    script: join(HERE, 'kannel.lua'),
    env: {},
    pids: () => [bearerbox.pid, smsbox.pid],
    outbox: async () => queuedOf(await status()),
    stop: async () => {
      await smsbox.stop(10_000);
      await bearerbox.stop(10_000);
    },
  };
}
