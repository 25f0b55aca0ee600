/**
 * A Map that forgets its oldest entry once it holds `max`. Insertion order is enough here: the
 * caches hold pure lookups (User-Agent, address), so a forgotten entry only costs one recomputation.
 */
export class BoundedCache<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(readonly max: number) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The cached value for `key`, computing and remembering it on a miss. */
  get(key: K, compute: (key: K) => V): V {
    const hit = this.#entries.get(key);
    if (hit !== undefined) return hit;
    const value = compute(key);
    if (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value as K);
    this.#entries.set(key, value);
    return value;
  }
}
