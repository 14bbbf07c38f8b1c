import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the event loop. SQLite checkpoints at the end of a
 * commit once the WAL passes wal_autocheckpoint pages, and a checkpoint
 * copies pages into the database file and fsyncs it: on the single
 * better-sqlite3 connection that would stop the process for that long. A
 * worker thread with a connection of its own runs PASSIVE checkpoints (they
 * never block readers or the writer) every `everyMs` instead. The main
 * connection keeps a high wal_autocheckpoint as a safety net, so the WAL
 * stays bounded even if the worker stopped.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(path: string, everyMs: number) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(
      `
      const { workerData, parentPort } = require('node:worker_threads');
      const Database = require(workerData.driver);
      const db = new Database(workerData.path);
      db.pragma('busy_timeout = 1000');
      db.pragma('synchronous = FULL');
      const timer = setInterval(() => {
        try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { /* busy: the next round */ }
      }, workerData.everyMs);
      parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
      `,
      { eval: true, workerData: { driver, path, everyMs } },
    );
    this.exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    // A failed checkpoint thread must not take the process down: the connection's own autocheckpoint remains.
    this.worker.on('error', () => undefined);
    this.worker.unref();
  }

  /** Stops the thread; keeps the process alive until it has closed its connection. */
  async stop(): Promise<void> {
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.exited;
  }
}
