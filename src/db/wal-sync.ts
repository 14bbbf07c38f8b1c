import { open, type FileHandle } from 'node:fs/promises';

/** fsync of one file, coalesced: a caller waits for an fsync that started after its call. */
export class WalSync {
  private handle: Promise<FileHandle> | null = null;
  private running: Promise<void> | null = null;
  private next: Promise<void> | null = null;

  constructor(private readonly path: string) {}

  sync(): Promise<void> {
    if (!this.running) {
      this.running = this.fsync().finally(() => {
        this.running = null;
      });
      return this.running;
    }
    // The one running may have started before the caller's commit: wait for the next.
    this.next ??= this.running.then(
      () => this.startNext(),
      () => this.startNext(),
    );
    return this.next;
  }

  async close(): Promise<void> {
    await this.running?.catch(() => undefined);
    await this.next?.catch(() => undefined);
    const handle = await this.handle?.catch(() => null);
    this.handle = null;
    await handle?.close();
  }

  private startNext(): Promise<void> {
    this.next = null;
    return this.sync();
  }

  private async fsync(): Promise<void> {
    this.handle ??= open(this.path, 'r');
    try {
      await (await this.handle).sync();
    } catch (err) {
      this.handle = null; // opened again by the next call
      throw err;
    }
  }
}
