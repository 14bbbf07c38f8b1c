/**
 * Lookups kept for `ttlMs`, by key. The lookup itself is kept (a promise),
 * so requests that miss together share one read; a failed read is not
 * remembered. Past `maxEntries` the cache starts over, so that a flood of
 * distinct keys cannot grow it without bound.
 */
export class LookupCache<K, V> {
  private entries = new Map<K, { value: Promise<V>; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  clear(): void {
    this.entries.clear();
  }

  get(key: K, load: () => Promise<V>): Promise<V> {
    const now = Date.now();
    const cached = this.entries.get(key);
    if (cached && cached.expires > now) return cached.value;
    if (this.entries.size > this.maxEntries) this.clear();
    const fresh = { value: load(), expires: now + this.ttlMs };
    this.entries.set(key, fresh);
    fresh.value.catch(() => this.entries.get(key) === fresh && this.entries.delete(key));
    return fresh.value;
  }
}
