import { afterEach, describe, expect, it } from 'vitest';
import { decodeQrPng } from '@deeplink/test-kit/qr';
import { qrRenderPool, type QrRenderPool } from '../src/domain/qr-render-pool.js';

const options = { errorCorrectionLevel: 'M', margin: 4, width: 512 } as const;
let pool: QrRenderPool | undefined;
afterEach(() => pool?.close());

describe('qrRenderPool', () => {
  it('draws PNGs on at most `threads` threads that a reader decodes', async () => {
    pool = qrRenderPool({ threads: 2, maxQueue: 8 });
    const pngs = await Promise.all(
      ['https://s.example/a', 'https://s.example/b', 'https://s.example/c'].map((text) => pool!.render(text, options)),
    );
    expect(pngs.map((png) => decodeQrPng(png).text)).toEqual(['https://s.example/a', 'https://s.example/b', 'https://s.example/c']);
    expect(pool.threads).toBe(2);
  });

  it('refuses a render at once when every thread is busy and the queue is full', async () => {
    pool = qrRenderPool({ threads: 1, maxQueue: 1 });
    const results = await Promise.allSettled([1, 2, 3].map((i) => pool!.render(`https://s.example/${i}`, options)));
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ status: 429, headers: { 'Retry-After': '1' } });
  });

  it('ends its threads on close and refuses what waits or comes after', async () => {
    pool = qrRenderPool({ threads: 1, maxQueue: 4 });
    await pool.render('https://s.example/warm', options);
    const drawing = pool.render('https://s.example/1', options).catch((error: unknown) => error);
    const waiting = pool.render('https://s.example/2', options).catch((error: unknown) => error);
    await pool.close();
    expect(await waiting).toMatchObject({ status: 429 });
    expect(await drawing).toBeInstanceOf(Error);
    expect(pool.threads).toBe(0);
    await expect(pool.render('https://s.example/3', options)).rejects.toMatchObject({ status: 429 });
  });
});
