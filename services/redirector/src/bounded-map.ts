/**
 * A Map of at most `max` entries, and of at most `maxWeight` in total by `weigh`, that drops the
 * entries set longest ago. A read is one Map lookup and changes nothing, so the hit path stays as
 * cheap as a plain Map; `set` (of a new or an existing key) makes an entry the newest. The link
 * cache sets an entry in use again at least every LINK_CACHE_TTL_MS (its refresh), so what goes
 * first is what has not been visited for longest, at that granularity: an LRU without the
 * bookkeeping on every hit. The weight bound is what keeps a few huge entries from holding memory
 * that a count bound would let them have.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();
  private readonly weights = new Map<K, number>();
  private total = 0;

  constructor(
    private readonly max: number,
    private readonly maxWeight = Infinity,
    private readonly weigh: (value: V) => number = () => 0,
  ) {}

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V): void {
    // Map keeps insertion order: deleting first moves the key to the end.
    this.delete(key);
    const weight = this.weigh(value);
    this.entries.set(key, value);
    if (weight > 0) this.weights.set(key, weight);
    this.total += weight;
    while (this.entries.size > this.max || (this.total > this.maxWeight && this.entries.size > 1)) {
      this.delete(this.entries.keys().next().value!);
    }
  }

  delete(key: K): void {
    if (!this.entries.delete(key)) return;
    this.total -= this.weights.get(key) ?? 0;
    this.weights.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.weights.clear();
    this.total = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entries' total weight. */
  get weight(): number {
    return this.total;
  }
}
