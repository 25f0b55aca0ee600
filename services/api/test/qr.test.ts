import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeQrPng } from '@deeplink/test-kit/qr';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let owner: { token: string };
let link: { id: string; url: string };
beforeAll(async () => {
  api = await createApiHarness();
  owner = await api.registerUser('Owner');
  const created = await api.request({
    method: 'POST',
    url: '/api/links',
    token: owner.token,
    payload: { title: 'Poster', defaultUrl: 'https://example.com/poster' },
  });
  link = created.json().data.link;
});
afterAll(() => api.close());

describe('GET /api/links/:id/qr', () => {
  it('answers an SVG of the short URL by default', async () => {
    const response = await api.request({ method: 'GET', url: `/api/links/${link.id}/qr`, token: owner.token });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(response.headers['cache-control']).toBe('private, no-cache');
    expect(response.body).toMatch(/^<svg[^>]+viewBox="0 0 \d+ \d+"/);
    expect(response.body).toContain('width="512"');
  });

  it('answers a PNG of the requested size that a reader decodes back to the short URL', async () => {
    const response = await api.request({ method: 'GET', url: `/api/links/${link.id}/qr?format=png&size=300&margin=2`, token: owner.token });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('image/png');
    expect(response.headers['content-disposition']).toMatch(/^inline; filename="qr-[0-9A-Za-z]+\.png"$/);
    const decoded = decodeQrPng(response.rawPayload);
    expect(decoded.width).toBe(300);
    expect(decoded.text).toBe(link.url);
  });

  it('refuses an unknown format and sizes or margins out of bounds, naming each field', async () => {
    const response = await api.request({ method: 'GET', url: `/api/links/${link.id}/qr?format=gif&size=10&margin=99`, token: owner.token });
    expect(response.statusCode).toBe(400);
    const { error } = response.json();
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['format', 'margin', 'size']);
  });

  it("answers another account's link as GET /links/:id does (403), an unknown id with 404, no credentials with 401", async () => {
    const stranger = await api.registerUser('Stranger');
    const foreign = await api.request({ method: 'GET', url: `/api/links/${link.id}/qr`, token: stranger.token });
    const sameAsLink = await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: stranger.token });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toEqual(sameAsLink.json());
    const unknown = await api.request({ method: 'GET', url: '/api/links/00000000-0000-4000-8000-000000000000/qr', token: owner.token });
    expect(unknown.statusCode).toBe(404);
    expect((await api.request({ method: 'GET', url: `/api/links/${link.id}/qr` })).statusCode).toBe(401);
  });
});

describe('large PNGs', () => {
  const png = (token: string, id: string) => api.request({ method: 'GET', url: `/api/links/${id}/qr?format=png&size=2048`, token });

  it("leave another account's requests fast while one account keeps asking for them", { timeout: 60_000 }, async () => {
    const printer = await api.registerUser('Printer');
    const poster = (
      await api.request({
        method: 'POST',
        url: '/api/links',
        token: printer.token,
        payload: { title: 'Big', defaultUrl: 'https://example.com/big' },
      })
    ).json().data.link;
    const other = await api.registerUser('Other');
    let drawing = true;
    let drawn = 0;
    // As many at once as one account may have; each drawn in a few hundred milliseconds of CPU.
    const draw = async () => {
      while (drawing) {
        const response = await png(printer.token, poster.id);
        expect(response.statusCode, response.body).toBe(200);
        drawn++;
      }
    };
    const drawers = [draw(), draw()];
    await sleep(300);
    const latencies: number[] = [];
    for (let i = 0; i < 15; i++) {
      const started = performance.now();
      const me = await api.request({ method: 'GET', url: '/api/auth/me', token: other.token });
      latencies.push(performance.now() - started);
      expect(me.statusCode).toBe(200);
      await sleep(40);
    }
    drawing = false;
    await Promise.all(drawers);
    latencies.sort((a, b) => a - b);
    expect(drawn).toBeGreaterThan(0);
    // Drawn on the API's own thread, every request waited behind a render (median 300+ ms); on a
    // render thread they do not wait at all. The bound leaves room for a loaded machine.
    expect(latencies[Math.floor(latencies.length / 2)]!).toBeLessThan(80);
  });

  it('are drawn two at a time per account: a third at once is a 429 with Retry-After', async () => {
    const responses = await Promise.all([1, 2, 3].map(() => png(owner.token, link.id)));
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([200, 200, 429]);
    const refused = responses.find((response) => response.statusCode === 429)!;
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ success: false, error: { code: 'RATE_LIMITED' } });
    // Once those are drawn, the account draws again.
    expect((await png(owner.token, link.id)).statusCode).toBe(200);
  });
});
