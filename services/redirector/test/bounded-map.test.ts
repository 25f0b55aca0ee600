import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../src/bounded-map.js';

describe('BoundedMap', () => {
  it('drops the entry set longest ago once it holds more than its maximum', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect([map.get('a'), map.get('b'), map.get('c'), map.size]).toEqual([undefined, 2, 3, 2]);
  });

  it('makes an entry the newest when it is set again, but not when it is read', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1); // a read keeps a the oldest
    map.set('c', 3);
    expect(map.get('a')).toBeUndefined();

    map.set('b', 20); // set again: b is now newer than c
    map.set('d', 4);
    expect([map.get('b'), map.get('c'), map.get('d')]).toEqual([20, undefined, 4]);
  });

  it('deletes and clears', () => {
    const map = new BoundedMap<string, number>(3);
    map.set('a', 1);
    map.set('b', 2);
    map.delete('a');
    expect([map.get('a'), map.size]).toEqual([undefined, 1]);
    map.clear();
    expect(map.size).toBe(0);
  });
});
