import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../src/bounded-map.js';

describe('BoundedMap', () => {
  it('keeps at most `max` entries, and always the half set most recently', () => {
    const map = new BoundedMap<number, number>(10);
    for (let i = 0; i < 1000; i++) {
      map.set(i, i);
      expect(map.size).toBeLessThanOrEqual(10);
      for (let recent = Math.max(0, i - 4); recent <= i; recent++) expect(map.get(recent)).toBe(recent);
    }
    expect(map.get(0)).toBeUndefined();
  });

  it('makes an entry the newest when it is set again, but not when it is read', () => {
    const map = new BoundedMap<string, number>(4);
    map.set('a', 1);
    map.set('b', 2); // the newer generation is full: a and b become the older one
    expect(map.get('a')).toBe(1); // a read keeps a old
    map.set('c', 3);
    map.set('d', 4); // c and d age: a and b are dropped
    expect([map.get('a'), map.get('b'), map.get('c'), map.get('d')]).toEqual([undefined, undefined, 3, 4]);

    map.set('c', 30); // set again: c is new, d stays old
    map.set('e', 5); // c and e age: d is dropped
    expect([map.get('c'), map.get('d'), map.get('e')]).toEqual([30, undefined, 5]);
  });

  it('bounds the total weight the same way, and keeps a single entry heavier than half of it', () => {
    const map = new BoundedMap<string, string>(1000, 100, (value) => value.length);
    for (let i = 0; i < 50; i++) {
      map.set(`k${i}`, 'x'.repeat(10));
      expect(map.weight).toBeLessThanOrEqual(100);
    }
    map.set('huge', 'y'.repeat(80));
    expect(map.get('huge')).toHaveLength(80);
    expect(map.weight).toBeLessThanOrEqual(100 + 80);
    map.delete('huge');
    expect(map.get('huge')).toBeUndefined();
    expect(map.weight).toBeLessThanOrEqual(100);
  });

  it('weighs an entry by its key too when asked to', () => {
    const map = new BoundedMap<string, number>(1000, 1000, (value, key) => key.length + value);
    map.set('x'.repeat(100), 1);
    expect(map.weight).toBe(101);
    for (let i = 0; i < 100; i++) {
      map.set(`${i}`.padStart(200, 'k'), 0);
      expect(map.weight).toBeLessThanOrEqual(1000);
    }
  });

  it('remembers computed values, and keeps those in steady use', () => {
    const map = new BoundedMap<string, number>(4);
    let computed = 0;
    const value = (key: string) => map.remember(key, () => ++computed);
    expect(value('popular')).toBe(1);
    for (let i = 0; i < 100; i++) {
      value(`once-${i}`);
      expect(value('popular')).toBe(1); // read between every new key: never computed again
    }
    expect(computed).toBe(101);
  });

  it('deletes from either generation and clears', () => {
    const map = new BoundedMap<string, number>(4, Infinity, () => 1);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    map.delete('a'); // older generation
    map.delete('c'); // newer generation
    expect([map.get('a'), map.get('b'), map.get('c'), map.size, map.weight]).toEqual([undefined, 2, undefined, 1, 1]);
    map.clear();
    expect([map.size, map.weight]).toEqual([0, 0]);
  });
});
