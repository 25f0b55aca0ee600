import { describe, expect, it } from 'vitest';
import { compileUrlPatterns, normalizeUrlPattern, urlPatternProblem } from '../src/routing/url-patterns.js';

describe('allowed URL patterns', () => {
  it('match a whole URL, * standing for any run of characters', () => {
    const allows = compileUrlPatterns(['https://example.com/*', 'https://shop.example.com/p?id=*&x=1']);
    expect(allows('https://example.com/')).toBe(true);
    expect(allows('https://example.com')).toBe(true);
    expect(allows('https://example.com/a/b?c=d#e')).toBe(true);
    expect(allows('https://shop.example.com/p?id=42&x=1')).toBe(true);
    expect(allows('https://shop.example.com/p?id=42&x=2')).toBe(false);
    expect(allows('http://example.com/')).toBe(false);
    expect(allows('https://example.com.evil.test/')).toBe(false);
    expect(allows('https://other.test/https://example.com/')).toBe(false);
  });

  it('keep a * of the host within the host', () => {
    const allows = compileUrlPatterns(['https://*.example.com/*']);
    expect(allows('https://a.example.com/x')).toBe(true);
    expect(allows('https://a.b.example.com/')).toBe(true);
    expect(allows('https://example.com/')).toBe(false);
    expect(allows('https://evil.test/?.example.com/')).toBe(false);
    expect(allows('https://evil.test/.example.com/')).toBe(false);
    expect(allows('https://a.example.com@evil.test/')).toBe(false);
    expect(allows('https://user@a.example.com/')).toBe(false);
  });

  it('match pieces in order, each once', () => {
    const allows = compileUrlPatterns(['https://example.com/*/a/*/a']);
    expect(allows('https://example.com/x/a/y/a')).toBe(true);
    expect(allows('https://example.com/x/a')).toBe(false);
    expect(compileUrlPatterns(['https://example.com/ab*ba'])('https://example.com/aba')).toBe(false);
    expect(compileUrlPatterns(['https://example.com/ab*ba'])('https://example.com/abba')).toBe(true);
  });

  it('refuse what is not an http(s) URL or has other characters in its host', () => {
    expect(urlPatternProblem('https://example.com/*')).toBeUndefined();
    expect(urlPatternProblem('HTTPS://Example.COM')).toBeUndefined();
    for (const bad of [
      '^https://example\\.com/.*$',
      'javascript:*',
      'example.com/*',
      'https://exa mple.com/',
      'https://a_b.com/',
      'ftp://x.com/',
    ]) {
      expect(urlPatternProblem(bad), bad).toMatch(/must be/);
    }
    expect(urlPatternProblem(`https://example.com/${'a'.repeat(500)}`)).toMatch(/at most 500/);
    expect(compileUrlPatterns(['not a pattern'])('https://example.com/')).toBe(false);
  });

  it('are stored with the scheme and host lower-cased, a bare host meaning its root', () => {
    expect(normalizeUrlPattern('HTTPS://Example.COM')).toBe('https://example.com/');
    expect(normalizeUrlPattern('https://Example.com/Path/*')).toBe('https://example.com/Path/*');
  });

  it('take time linear in the URL on a pattern made to backtrack', () => {
    const allows = compileUrlPatterns([`https://example.com/${'*a'.repeat(200)}b`]);
    const url = `https://example.com/${'a'.repeat(2000)}`;
    const started = performance.now();
    for (let i = 0; i < 100; i++) expect(allows(url)).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
