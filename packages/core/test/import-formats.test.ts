import { describe, expect, it } from 'vitest';
import { importRowReader, parseCreationTime, shortPathCode } from '../src/index.js';

describe('shortPathCode', () => {
  it('takes the path of a short URL, of a URL without its scheme, or a path alone', () => {
    expect(shortPathCode('https://example.page.link/Ab3d')).toEqual({ ok: true, code: 'Ab3d' });
    expect(shortPathCode('bit.ly/3xYz9')).toEqual({ ok: true, code: '3xYz9' });
    expect(shortPathCode('/spring-sale')).toEqual({ ok: true, code: 'spring-sale' });
    expect(shortPathCode('spring_sale')).toEqual({ ok: true, code: 'spring_sale' });
    expect(shortPathCode('https://example.page.link/abc?x=1#top')).toEqual({ ok: true, code: 'abc' });
  });

  it('refuses what cannot be a code, saying why', () => {
    expect(shortPathCode('  ')).toEqual({ ok: false, message: 'is empty' });
    expect(shortPathCode('https://go.example.com/promo/abc')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/several segments/),
    });
    expect(shortPathCode('https://go.example.com/metrics')).toMatchObject({ ok: false, message: expect.stringMatching(/reserved/) });
    expect(shortPathCode('https://go.example.com/caf%C3%A9')).toMatchObject({ ok: false, message: expect.stringMatching(/café/) });
    expect(shortPathCode('https://go.example.com/%E0%A4%A')).toMatchObject({ ok: false });
    expect(shortPathCode('https://')).toMatchObject({ ok: false, message: 'is not a URL or a path' });
  });
});

describe('parseCreationTime', () => {
  it('reads ISO 8601, "date time" as UTC with or without UTC, and Unix seconds', () => {
    expect(parseCreationTime('2023-05-01T12:30:00Z')?.toISOString()).toBe('2023-05-01T12:30:00.000Z');
    expect(parseCreationTime('2023-05-01 12:30:00')?.toISOString()).toBe('2023-05-01T12:30:00.000Z');
    expect(parseCreationTime('2023-05-01 12:30:00 UTC')?.toISOString()).toBe('2023-05-01T12:30:00.000Z');
    expect(parseCreationTime('1683030600')?.toISOString()).toBe('2023-05-02T12:30:00.000Z');
  });

  it('ignores what it cannot read and times in the future', () => {
    expect(parseCreationTime(undefined)).toBeUndefined();
    expect(parseCreationTime('')).toBeUndefined();
    expect(parseCreationTime('yesterday')).toBeUndefined();
    expect(parseCreationTime('2999-01-01T00:00:00Z')).toBeUndefined();
  });
});

describe('importRowReader', () => {
  it('finds Takeout columns by their parameter, their name or the parameter alone', () => {
    const reader = importRowReader('takeout', ['short link', 'LINK', 'Android package name', 'Link name', 'archived?']);
    expect(reader.ok).toBe(true);
    if (!reader.ok) return;
    expect(reader.read(['https://x.page.link/abc', 'https://example.com/', 'com.example.app', 'Named', 'yes'])).toMatchObject({
      ok: true,
      link: { code: 'abc', fields: { title: 'Named', androidLink: { appPackageName: 'com.example.app' }, tags: ['archived'] } },
    });
    expect(reader.read(['https://x.page.link/abc', '', '', '', ''])).toEqual({
      ok: false,
      code: 'abc',
      errors: [{ field: 'link', message: 'is empty' }],
    });
  });

  it('names the columns a format needs and a file lacks', () => {
    expect(importRowReader('bitly', ['title'])).toEqual({
      ok: false,
      errors: [
        { field: 'code', message: expect.stringMatching(/^needs a column the file lacks: one of link, bitlink/) },
        { field: 'defaultUrl', message: expect.stringMatching(/^needs a column the file lacks: one of long_url/) },
      ],
    });
  });

  it("fills the social preview of a generic row, its title defaulting to the link's", () => {
    const reader = importRowReader('generic', ['c', 'u', 'img', 'exp', 'after'], {
      code: 'c',
      defaultUrl: 'u',
      socialImageUrl: 'img',
      expiredUrl: 'after',
      expirationDate: 'exp',
    });
    if (!reader.ok) throw new Error('reader');
    expect(
      reader.read(['abc', 'https://example.com/', 'https://example.com/i.png', '2030-01-01', 'https://example.com/over']),
    ).toMatchObject({
      ok: true,
      link: {
        code: 'abc',
        fields: {
          title: 'abc',
          socialPreview: { title: 'abc', imageUrl: 'https://example.com/i.png' },
          expiredUrl: 'https://example.com/over',
        },
      },
    });
  });
});
