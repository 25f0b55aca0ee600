/**
 * A cache of at most about 2 × `max` entries, in two generations: when the newer map fills up, the
 * older one is dropped. Every operation is O(1), unlike evicting the first key of one big Map,
 * which slows down as deleted slots pile up at its front. Entries hold pure lookups, so a
 * forgotten one only costs a recomputation.
 */
export class BoundedCache<K, V> {
  #current = new Map<K, V>();
  #previous = new Map<K, V>();

  constructor(readonly max: number) {}

  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  /** The cached value for `key`, computing and remembering it on a miss. */
  get(key: K, compute: (key: K) => V): V {
    const hit = this.#current.get(key);
    if (hit !== undefined) return hit;
    const value = this.#previous.get(key) ?? compute(key);
    if (this.#current.size >= this.max) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
    this.#current.set(key, value);
    return value;
  }
}
