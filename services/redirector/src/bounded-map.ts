/**
 * A Map of at most `max` entries that drops the one set longest ago. A read is one Map lookup and
 * changes nothing, so the hit path stays as cheap as a plain Map; `set` (of a new or an existing
 * key) makes an entry the newest. The link cache sets an entry in use again at least every
 * LINK_CACHE_TTL_MS (its refresh), so what goes first is what has not been visited for longest,
 * at that granularity: an LRU without the bookkeeping on every hit.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V): void {
    // Map keeps insertion order: deleting first moves the key to the end.
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
