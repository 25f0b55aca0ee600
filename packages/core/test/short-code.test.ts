import { describe, expect, it } from 'vitest';
import { generateShortCode } from '../src/ids/short-code.js';

describe('generateShortCode', () => {
  it('makes 7 base62 characters by default', () => {
    for (let i = 0; i < 200; i++) expect(generateShortCode()).toMatch(/^[0-9A-Za-z]{7}$/);
  });

  it('uses the whole alphabet and does not repeat in practice', () => {
    const codes = new Set(Array.from({ length: 5000 }, () => generateShortCode()));
    expect(codes.size).toBe(5000);
    const characters = new Set([...codes].join(''));
    expect(characters.size).toBe(62);
  });
});
