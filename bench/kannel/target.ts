/** What `npm run bench:peer` needs of a system under test (Kannel, or the gateway in one or two processes). */
export interface Target {
  /** Column name in the table. */
  name: string;
  /** Base URL wrk loads. */
  url: string;
  /** wrk Lua script (bench/kannel/*.lua) and the environment it reads. */
  script: string;
  env: Record<string, string>;
  /** Its processes, for peak RSS and CPU. */
  pids(): number[];
  /** Messages accepted but not yet submitted (queued in the target). */
  outbox(): Promise<number>;
  stop(): Promise<void>;
}
