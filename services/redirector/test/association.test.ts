// The association files apps fetch to open short links themselves (Universal Links, App Links).
import { afterEach, describe, expect, it } from 'vitest';
import { redirectorsWithOwnEnvironment, visit } from './support.js';

const FINGERPRINT = '14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5';

const redirectors = redirectorsWithOwnEnvironment();
afterEach(() => redirectors.stopAll());
const redirectorWith = async (overrides: Record<string, string>) => (await redirectors.start(overrides)).redirector;

describe('association files on the default domain', () => {
  it("serves the operator's apps in Apple's and Google's documented formats, as JSON without a redirect", async () => {
    const redirector = await redirectorWith({
      DEFAULT_DOMAIN_APPS: `ios:ABCDE12345.com.example.shop,android:com.example.shop@${FINGERPRINT.toLowerCase()}`,
    });

    const apple = await visit(`${redirector.url}/.well-known/apple-app-site-association`);
    expect(apple.status).toBe(200);
    expect(apple.headers.get('content-type')).toBe('application/json');
    const association = JSON.parse(await apple.text()) as {
      applinks: { details: { appIDs: string[]; components: Record<string, unknown>[] }[] };
    };
    expect(Object.keys(association)).toEqual(['applinks']);
    expect(association.applinks.details).toHaveLength(1);
    const [detail] = association.applinks.details;
    expect(detail!.appIDs).toEqual(['ABCDE12345.com.example.shop']);
    // Components are matched in order: the service's own paths are excluded before the catch-all.
    expect(detail!.components.at(-1)).toMatchObject({ '/': '/*' });
    expect(detail!.components.filter((component) => component.exclude === true).map((component) => component['/'])).toEqual([
      '/healthz',
      '/readyz',
      '/.well-known/*',
    ]);

    const google = await visit(`${redirector.url}/.well-known/assetlinks.json`);
    expect(google.status).toBe(200);
    expect(google.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(await google.text())).toEqual([
      {
        relation: ['delegate_permission/common.handle_all_urls'],
        target: { namespace: 'android_app', package_name: 'com.example.shop', sha256_cert_fingerprints: [FINGERPRINT] },
      },
    ]);

    const head = await visit(`${redirector.url}/.well-known/assetlinks.json`, {}, 'HEAD');
    expect(head.status).toBe(200);
  });

  it('serves neither file when the operator lists no app', async () => {
    const redirector = await redirectorWith({});
    expect((await visit(`${redirector.url}/.well-known/apple-app-site-association`)).status).toBe(404);
    expect((await visit(`${redirector.url}/.well-known/assetlinks.json`)).status).toBe(404);
  });

  it('serves only the platforms listed', async () => {
    const redirector = await redirectorWith({ DEFAULT_DOMAIN_APPS: 'ios:ABCDE12345.com.example.shop' });
    expect((await visit(`${redirector.url}/.well-known/apple-app-site-association`)).status).toBe(200);
    expect((await visit(`${redirector.url}/.well-known/assetlinks.json`)).status).toBe(404);
  });
});
