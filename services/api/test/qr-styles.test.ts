import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeQrPng } from '@deeplink/test-kit/qr';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let owner: { token: string };
let link: { id: string; url: string };
beforeAll(async () => {
  api = await createApiHarness();
  owner = await api.registerUser('Designer');
  const created = await api.request({
    method: 'POST',
    url: '/api/links',
    token: owner.token,
    payload: { title: 'Branded poster', defaultUrl: 'https://example.com/branded' },
  });
  link = created.json().data.link;
});
afterAll(() => api.close());

/** A PNG logo of `width` × `height` px in one colour, with a transparent border of `border` px. */
function logoPng(width: number, height: number, [r, g, b]: [number, number, number], border = 0): Buffer {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const inside = x >= border && y >= border && x < width - border && y < height - border;
      png.data.set([r, g, b, inside ? 255 : 0], i);
    }
  }
  return PNG.sync.write(png);
}

/** The colour of the pixel at (x, y) of a PNG. */
function pixel(png: Buffer, x: number, y: number): [number, number, number] {
  const image = PNG.sync.read(png);
  const i = (y * image.width + x) * 4;
  return [image.data[i]!, image.data[i + 1]!, image.data[i + 2]!];
}

const render = (payload: object) => api.request({ method: 'POST', url: `/api/links/${link.id}/qr`, token: owner.token, payload });

describe('QR colours', () => {
  it('draws the modules and the background in the colours asked for, and still decodes', async () => {
    const response = await api.request({
      method: 'GET',
      url: `/api/links/${link.id}/qr?format=png&size=400&color=%231b3a6b&background=f4efe1`,
      token: owner.token,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(decodeQrPng(response.rawPayload).text).toBe(link.url);
    expect(pixel(response.rawPayload, 2, 2)).toEqual([0xf4, 0xef, 0xe1]); // the quiet zone
    const image = PNG.sync.read(response.rawPayload);
    const colours = new Set<string>();
    for (let i = 0; i < image.data.length; i += 4) colours.add(`${image.data[i]},${image.data[i + 1]},${image.data[i + 2]}`);
    expect(colours).toEqual(new Set(['27,58,107', '244,239,225']));

    const svg = await api.request({ method: 'GET', url: `/api/links/${link.id}/qr?color=1b3a6b&background=f4efe1`, token: owner.token });
    expect(svg.body).toContain('fill="#f4efe1"');
    expect(svg.body).toContain('stroke="#1b3a6b"');
  });

  it('refuses colours a camera reads badly: inverted, or too little contrast, naming the field', async () => {
    for (const [query, message] of [
      ['color=ffffff&background=000000', /must be darker than the background/],
      ['color=999999&background=bbbbbb', /contrast of 1\.\d:1 with the background; at least 3:1/],
      ['color=blue', /six hex digits/],
    ] as const) {
      const response = await api.request({ method: 'GET', url: `/api/links/${link.id}/qr?${query}`, token: owner.token });
      expect(response.statusCode, query).toBe(400);
      const { error } = response.json();
      expect(error.details).toEqual([{ field: 'color', message: expect.stringMatching(message) }]);
    }
  });
});

describe('QR logos', () => {
  it('draws a PNG logo over the centre of a PNG code that still decodes to the short URL', async () => {
    const logo = logoPng(240, 160, [200, 30, 40], 10);
    const response = await render({ format: 'png', size: 600, logo: logo.toString('base64'), color: '#222222' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('image/png');
    expect(decodeQrPng(response.rawPayload).text).toBe(link.url);
    expect(pixel(response.rawPayload, 300, 300)).toEqual([200, 30, 40]);
  });

  it('embeds the logo in an SVG code on a square of the background', async () => {
    const logo = logoPng(64, 64, [0, 120, 60]);
    const response = await render({ logo: logo.toString('base64'), background: '#fffdf5' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(response.body).toMatch(
      /<rect x="\d+" y="\d+" width="\d+" height="\d+" fill="#fffdf5"\/><image [^>]*href="data:image\/png;base64,/,
    );
    expect(response.body).toContain(logo.toString('base64'));
  });

  it('refuses a logo that is not a PNG, or too large, and unknown options, naming each field', async () => {
    const notPng = await render({ logo: Buffer.from('GIF89a not a png at all, really').toString('base64') });
    expect(notPng.statusCode).toBe(400);
    expect(notPng.json().error.details).toEqual([{ field: 'logo', message: 'must be a PNG image in base64' }]);

    const huge = await render({ logo: logoPng(1100, 10, [0, 0, 0]).toString('base64') });
    expect(huge.statusCode).toBe(400);
    expect(huge.json().error.details).toEqual([{ field: 'logo', message: 'must be at most 1024 × 1024 px (it is 1100 × 10)' }]);

    const unknown = await render({ logoScale: 2 });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.details.map((detail: { field: string }) => detail.field)).toEqual(['logoScale']);

    const stranger = await api.registerUser('Stranger');
    const foreign = await api.request({ method: 'POST', url: `/api/links/${link.id}/qr`, token: stranger.token, payload: {} });
    expect(foreign.statusCode).toBe(403);
  });
});

describe('QR logos fetched from an address', () => {
  let server: Server;
  let origin: string;
  const served: string[] = [];
  let local: ApiHarness;
  let designer: { token: string };
  let poster: { id: string; url: string };

  beforeAll(async () => {
    const icon = logoPng(96, 96, [30, 140, 200]);
    server = createServer((request, response) => {
      served.push(request.url ?? '');
      if (request.url === '/icon.png') return response.end(icon);
      response.end('<html>not an image</html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // This server is on loopback: only an API told to allow private addresses fetches from it.
    local = await createApiHarness({ env: { QR_LOGO_ALLOW_PRIVATE: '1' } });
    designer = await local.registerUser('Designer');
    const created = await local.request({
      method: 'POST',
      url: '/api/links',
      token: designer.token,
      payload: { title: 'App poster', defaultUrl: 'https://example.com/app' },
    });
    poster = created.json().data.link;
  });
  afterAll(async () => {
    await local?.close();
    server.closeAllConnections();
    server.close();
  });

  const renderThere = (payload: object) =>
    local.request({ method: 'POST', url: `/api/links/${poster.id}/qr`, token: designer.token, payload });

  it("draws the app's icon from its address, fetched once for several renders", async () => {
    const response = await renderThere({ format: 'png', size: 500, logoUrl: `${origin}/icon.png` });
    expect(response.statusCode, response.body).toBe(200);
    expect(decodeQrPng(response.rawPayload).text).toBe(poster.url);
    expect(pixel(response.rawPayload, 250, 250)).toEqual([30, 140, 200]);
    const svg = await renderThere({ logoUrl: `${origin}/icon.png`, color: '#1b3a6b' });
    expect(svg.statusCode, svg.body).toBe(200);
    expect(svg.body).toContain('href="data:image/png;base64,');
    expect(served.filter((path) => path === '/icon.png')).toHaveLength(1);
  });

  it('names logoUrl when the address is not a PNG, both logo and logoUrl are given, or the address is private', async () => {
    const page = await renderThere({ logoUrl: `${origin}/page.html` });
    expect(page.statusCode).toBe(400);
    expect(page.json().error.details).toEqual([{ field: 'logoUrl', message: 'must be the address of a PNG image' }]);

    const both = await renderThere({ logoUrl: `${origin}/icon.png`, logo: logoPng(8, 8, [0, 0, 0]).toString('base64') });
    expect(both.statusCode).toBe(400);
    expect(both.json().error.details).toEqual([{ field: 'logoUrl', message: 'give either logo or logoUrl, not both' }]);

    const credentials = await renderThere({ logoUrl: 'https://user:secret@example.com/icon.png' });
    expect(credentials.statusCode).toBe(400);
    expect(credentials.json().error.details).toEqual([{ field: 'logoUrl', message: 'must not hold a user name or password' }]);

    // The default: loopback, private networks and cloud metadata addresses are never fetched.
    const before = served.length;
    for (const url of [`${origin}/icon.png`, 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/icon.png']) {
      const refused = await render({ logoUrl: url });
      expect(refused.statusCode, url).toBe(400);
      expect(refused.json().error.details[0].field).toBe('logoUrl');
      expect(refused.json().error.details[0].message).toMatch(/^could not be fetched: .* is not on the public internet$/);
    }
    expect(served.length).toBe(before);
  });
});
