/**
 * A background loop's idle wait that can be cut short: `sleep(ms)` resolves
 * after ms, or at once when `wake()` is called (new work was committed).
 */
export class Waker {
  private sleepers = new Set<() => void>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  wake(): void {
    for (const s of this.sleepers) s();
  }
}
