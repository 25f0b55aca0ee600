import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchPublic, OutboundFetchError } from '../src/net/outbound-fetch.js';
import { isPublicAddress } from '../src/net/public-address.js';

describe('public addresses', () => {
  it.each([
    ['8.8.8.8', true],
    ['93.184.215.14', true],
    ['2606:2800:21f:cb07:6820:80da:af6b:8b2c', true],
    ['1.1.1.1', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['127.8.9.10', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['172.20.0.1', false],
    ['172.31.255.255', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['198.51.100.7', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fc00::1', false],
    ['fd12:3456::1', false],
    ['ff02::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:a9fe:a9fe', false],
    ['::ffff:8.8.8.8', true],
    ['localhost', false],
  ])('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('fetching from the public internet only', () => {
  let server: Server;
  let origin: string;
  const bytes = Buffer.alloc(3000, 7);

  beforeAll(async () => {
    server = createServer((request, response) => {
      const path = request.url ?? '/';
      if (path === '/image') return response.end(bytes);
      if (path === '/large') return response.end(Buffer.alloc(5000));
      if (path === '/large-chunked') {
        response.write(Buffer.alloc(2000));
        response.write(Buffer.alloc(2000));
        return response.end(Buffer.alloc(2000));
      }
      if (path.startsWith('/hop/')) {
        const left = Number(path.slice(5));
        response.writeHead(302, { location: left === 0 ? '/image' : `/hop/${left - 1}` });
        return response.end();
      }
      if (path === '/missing') {
        response.writeHead(404);
        return response.end();
      }
      // /silent: never answers.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  const open = { maxBytes: 4096, timeoutMs: 2000, allowPrivate: true };
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    );

  it('refuses loopback and private targets, by address and by a name that resolves to one', async () => {
    const { port } = new URL(origin);
    for (const url of [
      `${origin}/image`,
      `http://localhost:${port}/image`,
      `http://[::1]:${port}/image`,
      `http://[::ffff:127.0.0.1]:${port}/image`,
    ]) {
      const error = await refusal(fetchPublic(url, { maxBytes: 4096, timeoutMs: 2000 }));
      expect(error, url).toBeInstanceOf(OutboundFetchError);
      expect((error as Error).message, url).toMatch(/not on the public internet/);
    }
  });

  it('refuses other schemes and credentials in the address', async () => {
    expect(((await refusal(fetchPublic('file:///etc/passwd', open))) as Error).message).toMatch(/only http and https/);
    expect(((await refusal(fetchPublic(`http://user:secret@127.0.0.1:1/`, open))) as Error).message).toMatch(/credentials/);
  });

  it('fetches within the bounds, following a few redirects', async () => {
    expect((await fetchPublic(`${origin}/image`, open)).body.equals(bytes)).toBe(true);
    expect((await fetchPublic(`${origin}/hop/2`, open)).body.equals(bytes)).toBe(true);
    expect(((await refusal(fetchPublic(`${origin}/hop/3`, open))) as Error).message).toBe('too many redirects');
  });

  it('refuses bodies over the limit, declared or not, answers other than 200, and silence', async () => {
    expect(((await refusal(fetchPublic(`${origin}/large`, open))) as Error).message).toBe('is larger than 4 KiB');
    expect(((await refusal(fetchPublic(`${origin}/large-chunked`, open))) as Error).message).toBe('is larger than 4 KiB');
    expect(((await refusal(fetchPublic(`${origin}/missing`, open))) as Error).message).toBe('answered HTTP 404');
    expect(((await refusal(fetchPublic(`${origin}/silent`, { ...open, timeoutMs: 300 }))) as Error).message).toBe(
      'took too long to answer',
    );
    expect(((await refusal(fetchPublic('http://127.0.0.1:1/', open))) as Error).message).toBe('refused the connection');
  });
});
