import { BoundedMap, invalidRequest, QR_LOGO_MAX_BYTES } from '@deeplink/core';
import { fetchPublic, OutboundFetchError } from '@deeplink/core/net';
import { concurrencyLimit } from './concurrency-limit.js';

/** How long a fetched logo is reused: a QR card's preview asks again at every colour change. */
export const LOGO_TTL_MS = 10 * 60_000;
/** Logos kept in memory, and their bytes in all. */
const LOGOS_KEPT = 32;
const LOGOS_KEPT_BYTES = 8 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 5_000;

/**
 * Logos named by URL (`logoUrl`, an app's icon say), fetched from the public internet through
 * fetchPublic (size, time and redirects bounded; private addresses refused unless `allowPrivate`)
 * and kept a few minutes. One fetch per URL at a time, two per account and sixteen in all, so no
 * client can hold this process's sockets.
 */
export function qrLogoSource({ allowPrivate, now = Date.now }: { allowPrivate: boolean; now?: () => number }) {
  const kept = new BoundedMap<string, { image: Buffer; until: number }>(LOGOS_KEPT, LOGOS_KEPT_BYTES, (logo) => logo.image.length);
  const fetching = new Map<string, Promise<Buffer>>();
  const limit = concurrencyLimit({ what: 'logo fetches', perUser: 2, total: 16, retryAfterSeconds: 5 });

  const fetchLogo = async (url: string): Promise<Buffer> => {
    try {
      const { body } = await fetchPublic(url, { maxBytes: QR_LOGO_MAX_BYTES, timeoutMs: FETCH_TIMEOUT_MS, allowPrivate });
      kept.set(url, { image: body, until: now() + LOGO_TTL_MS });
      return body;
    } catch (error) {
      if (!(error instanceof OutboundFetchError)) throw error;
      throw invalidRequest('The logo could not be fetched', [{ field: 'logoUrl', message: `could not be fetched: ${error.message}` }]);
    }
  };

  return {
    /** The image at `url` for `userId`'s QR code (its bytes as served; the renderer checks it is a PNG). */
    async get(userId: string, url: string): Promise<Buffer> {
      const known = kept.get(url);
      if (known && known.until > now()) return known.image;
      const pending = fetching.get(url);
      if (pending) return pending;
      const release = limit.acquire(userId);
      const fetched = fetchLogo(url).finally(() => {
        release();
        fetching.delete(url);
      });
      fetching.set(url, fetched);
      return fetched;
    },
  };
}
export type QrLogoSource = ReturnType<typeof qrLogoSource>;
