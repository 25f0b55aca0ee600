import http from 'node:http';
import https from 'node:https';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';

/** What the delivery log keeps of an answer's body. */
export const RESPONSE_PREFIX_BYTES = 512;

export type SendResult =
  | { kind: 'answered'; status: number; body: string; durationMs: number }
  | { kind: 'failed'; error: string; durationMs: number };

/** A lookup that gives `address` whatever it is asked: the connection goes where the check looked. */
const pinnedLookup =
  (address: LookupAddress): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all) (callback as (error: null, addresses: LookupAddress[]) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };

/**
 * POSTs `body` to `url`, connected to `address` (already checked) rather than to what the name
 * resolves to now; TLS still verifies the certificate against the URL's host. Redirects are not
 * followed. Reads at most RESPONSE_PREFIX_BYTES of the answer, then drops the connection; the
 * whole attempt is bounded by `timeoutMs`.
 */
export function sendRequest(
  url: URL,
  address: LookupAddress,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(result);
    };
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'POST',
      lookup: pinnedLookup(address),
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: false,
    });
    const timer = setTimeout(() => finish({ kind: 'failed', error: `no answer within ${timeoutMs} ms`, durationMs: elapsed() }), timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({ kind: 'failed', error: error.code ? `${error.code}: ${error.message}` : error.message, durationMs: elapsed() }),
    );
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () =>
        finish({
          kind: 'answered',
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).subarray(0, RESPONSE_PREFIX_BYTES).toString('utf8'),
          durationMs: elapsed(),
        });
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_PREFIX_BYTES) done();
      });
      response.on('end', done);
      response.on('error', done);
    });
    request.end(body);
  });
}
