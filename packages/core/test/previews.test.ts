import { describe, expect, it } from 'vitest';
import { deadEndPages, PAGE_CSP, renderPreviewPage } from '../src/routing/pages.js';
import { isPreviewCrawler, PREVIEW_CRAWLERS } from '../src/routing/preview-crawlers.js';
import { UA } from '@deeplink/test-kit/user-agents';

describe('isPreviewCrawler', () => {
  it('knows every crawler of the list by its real User-Agent, in any case', () => {
    for (const crawler of PREVIEW_CRAWLERS) {
      expect(isPreviewCrawler(crawler.example), crawler.name).toBe(true);
      expect(isPreviewCrawler(crawler.example.toUpperCase()), crawler.name).toBe(true);
    }
  });

  it('takes no browser, search engine or tool for one', () => {
    for (const [name, agent] of Object.entries(UA)) expect(isPreviewCrawler(agent), name).toBe(false);
    expect(isPreviewCrawler('')).toBe(false);
  });
});

describe('renderPreviewPage', () => {
  it('escapes every text into the tags and leaves out the tags of missing fields', () => {
    const html = renderPreviewPage(
      { title: '"><script>alert(1)</script>' },
      'https://example.com/?a=1&b="2"',
      'https://go.example.com/spring',
      'Brand <x>',
    );
    expect(html).not.toContain('<script>');
    expect(html).toContain('<meta property="og:title" content="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">');
    expect(html).toContain('<a class="button" href="https://example.com/?a=1&amp;b=&quot;2&quot;">Continue</a>');
    expect(html).toContain('<meta name="twitter:card" content="summary">');
    expect(html).not.toContain('og:image');
    expect(html).not.toContain('og:description');
    expect(html).toContain('<footer>Brand &lt;x&gt;</footer>');
  });

  it('names the short URL as og:url, not the destination, whose own card a network would draw instead', () => {
    const html = renderPreviewPage({ title: 'Spring' }, 'https://shop.example.com/spring', 'https://go.example.com/spring');
    expect(html).toContain('<meta property="og:url" content="https://go.example.com/spring">');
    expect(html).not.toContain('content="https://shop.example.com/spring"');
  });

  it('shows only an http(s) image, whatever the record holds', () => {
    for (const imageUrl of [
      'javascript:alert(1)',
      'data:image/svg+xml,<svg onload=alert(1)>',
      'vbscript:x',
      'file:///etc/passwd',
      '//cdn.example.com/a.png',
      'https://cdn.example.com/a\n.png',
      'not a url',
    ]) {
      const html = renderPreviewPage({ title: 't', imageUrl }, 'https://example.com/', 'https://go.example.com/t');
      expect(html, imageUrl).not.toContain('og:image');
      expect(html, imageUrl).not.toContain('twitter:image');
      expect(html, imageUrl).toContain('<meta name="twitter:card" content="summary">');
    }
    const html = renderPreviewPage(
      { title: 't', imageUrl: 'https://cdn.example.com/a.png?w=1&h=2' },
      'https://example.com/',
      'https://go.example.com/t',
    );
    expect(html).toContain('<meta property="og:image" content="https://cdn.example.com/a.png?w=1&amp;h=2">');
    expect(html).toContain('<meta name="twitter:card" content="summary_large_image">');
  });

  it('uses the one style the Content-Security-Policy allows, like every page', () => {
    const style = (html: string) => /<style>([\s\S]*?)<\/style>/.exec(html)![1];
    const pages = deadEndPages('Other');
    expect(style(renderPreviewPage({ title: 't' }, 'https://example.com/', 'https://go.example.com/t'))).toBe(style(pages.notFound));
    expect(PAGE_CSP).not.toContain('unsafe-inline');
  });
});
