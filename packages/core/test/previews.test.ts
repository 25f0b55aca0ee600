import { describe, expect, it } from 'vitest';
import { deadEndPages, PAGE_CSP, renderPreviewPage } from '../src/routing/pages.js';
import { isPreviewCrawler, PREVIEW_CRAWLERS } from '../src/routing/preview-crawlers.js';
import { UA } from '../../../test/support/user-agents.js';

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
    const html = renderPreviewPage({ title: '"><script>alert(1)</script>' }, 'https://example.com/?a=1&b="2"', 'Brand <x>');
    expect(html).not.toContain('<script>');
    expect(html).toContain('<meta property="og:title" content="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">');
    expect(html).toContain('<meta property="og:url" content="https://example.com/?a=1&amp;b=&quot;2&quot;">');
    expect(html).toContain('<meta name="twitter:card" content="summary">');
    expect(html).not.toContain('og:image');
    expect(html).not.toContain('og:description');
    expect(html).toContain('<footer>Brand &lt;x&gt;</footer>');
  });

  it('uses the one style the Content-Security-Policy allows, like every page', () => {
    const style = (html: string) => /<style>([\s\S]*?)<\/style>/.exec(html)![1];
    const pages = deadEndPages('Other');
    expect(style(renderPreviewPage({ title: 't' }, 'https://example.com/'))).toBe(style(pages.notFound));
    expect(PAGE_CSP).not.toContain('unsafe-inline');
  });
});
