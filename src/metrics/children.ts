/**
 * The children of a metric (or of a level of labels), created on first use
 * and kept: the hot path finds them with Map lookups by label value, with no
 * key string built and nothing allocated once a label set has been seen.
 * Only for labels of bounded values (route templates, connectors, statuses).
 */
export class Children<K, C> {
  private readonly known = new Map<K, C>();

  constructor(private readonly create: (value: K) => C) {}

  get(value: K): C {
    let child = this.known.get(value);
    if (child === undefined) {
      child = this.create(value);
      this.known.set(value, child);
    }
    return child;
  }
}
