// Unknown codes sent to the operator's page instead of the redirector's own 404 page.
import { afterEach, describe, expect, it } from 'vitest';
import { createLink, newCode, redirectorsWithOwnEnvironment, visit } from './support.js';

const redirectors = redirectorsWithOwnEnvironment();
afterEach(() => redirectors.stopAll());

describe('NOT_FOUND_URL', () => {
  it('redirects unknown codes and malformed paths there, uncached, and leaves real links alone', async () => {
    const { env, redirector, userId } = await redirectors.start({ NOT_FOUND_URL: 'https://www.example.com/missing' });
    const link = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/found' });

    for (const path of [`/unknown${newCode()}`, '/', '/a/b', '/not.a.code']) {
      const response = await visit(`${redirector.url}${path}`);
      expect(response.status, path).toBe(302);
      expect(response.headers.get('location'), path).toBe('https://www.example.com/missing');
      expect(response.headers.get('cache-control'), path).toBe('private, no-store');
    }
    const found = await visit(`${redirector.url}/${link.code}`);
    expect(found.status).toBe(302);
    expect(found.headers.get('location')).toBe('https://example.com/found');
  });

  it('leaves the 404 page in place when unset', async () => {
    const { redirector } = await redirectors.start({});
    expect((await visit(`${redirector.url}/unknown${newCode()}`)).status).toBe(404);
  });
});
