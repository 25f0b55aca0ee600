import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from './public-address.js';

/** Why an outbound request failed, in words that can be shown to the user who named the URL. */
export class OutboundFetchError extends Error {
  constructor(
    message: string,
    /** ENOTPUBLIC for a target that is not on the public internet. */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The `code` of the error a refused target gives. */
export const NOT_PUBLIC = 'ENOTPUBLIC';
/** The error for `target` (a host name or an address), which is not on the public internet. */
export const notPublic = (target: string) => new OutboundFetchError(`${target} is not on the public internet`, NOT_PUBLIC);

/**
 * A DNS lookup for outbound requests that refuses a name any of whose addresses is not public,
 * and hands the connection the very addresses it checked: a name that resolves to a public address
 * for a check and to a private one for the connection (DNS rebinding) cannot slip through.
 */
export const publicLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, found: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    if (found.length === 0 || !found.every(({ address }) => isPublicAddress(address))) return callback(notPublic(hostname), '', 0);
    if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, found);
    callback(null, found[0]!.address, found[0]!.family);
  });
};

export interface OutboundFetchOptions {
  /** The body's largest size; a longer one is refused as soon as it is seen. */
  maxBytes: number;
  /** For the whole exchange, redirects included. */
  timeoutMs: number;
  /** Redirects followed (each checked like the first URL). */
  maxRedirects?: number;
  /** Let requests reach private and loopback addresses (tests, or a deployment that wants it). */
  allowPrivate?: boolean;
}

/**
 * GETs `url` (http or https) from the public internet: bounded in size and time, following a few
 * redirects, with no cookies or credentials sent. Every failure is an OutboundFetchError.
 */
export async function fetchPublic(url: string, options: OutboundFetchOptions): Promise<{ body: Buffer; contentType: string | undefined }> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  let target = new URL(url);
  for (let redirects = 0; ; redirects++) {
    const response = await get(target, options, signal);
    const location = response.headers.location;
    if (response.statusCode !== undefined && response.statusCode >= 300 && response.statusCode < 400 && location) {
      response.resume();
      if (redirects >= (options.maxRedirects ?? 3)) throw new OutboundFetchError('too many redirects');
      target = new URL(location, target);
      continue;
    }
    if (response.statusCode !== 200) {
      response.resume();
      throw new OutboundFetchError(`answered HTTP ${response.statusCode}`);
    }
    return { body: await readBounded(response, options.maxBytes), contentType: response.headers['content-type'] };
  }
}

function get(target: URL, options: OutboundFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new OutboundFetchError('only http and https addresses can be fetched');
  if (target.username || target.password) throw new OutboundFetchError('addresses with credentials are not fetched');
  const hostname = target.hostname.replace(/^\[(.*)\]$/, '$1');
  // Node connects to an IP literal without a lookup: check it here.
  if (!options.allowPrivate && isIP(hostname) && !isPublicAddress(hostname)) throw notPublic(hostname);
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = request(target, {
      method: 'GET',
      signal,
      lookup: options.allowPrivate ? undefined : publicLookup,
      headers: { 'user-agent': 'deeplink-fetch', accept: 'image/png,*/*;q=0.5' },
    });
    outgoing.once('response', resolve);
    outgoing.once('error', (error) => reject(describe(error, signal)));
    outgoing.end();
  });
}

async function readBounded(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (declared > maxBytes) {
    response.destroy();
    throw new OutboundFetchError(`is larger than ${maxBytes / 1024} KiB`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        response.destroy();
        throw new OutboundFetchError(`is larger than ${maxBytes / 1024} KiB`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    throw error instanceof OutboundFetchError ? error : new OutboundFetchError('the answer was cut short');
  }
  return Buffer.concat(chunks);
}

function describe(error: Error, signal: AbortSignal): OutboundFetchError {
  if (error instanceof OutboundFetchError) return error;
  if (signal.aborted) return new OutboundFetchError('took too long to answer');
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new OutboundFetchError('its host name could not be resolved');
  if (code === 'ECONNREFUSED') return new OutboundFetchError('refused the connection');
  return new OutboundFetchError(`could not be reached (${code ?? error.message})`);
}
