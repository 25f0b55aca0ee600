/// <reference lib="dom" />
// The webhooks page in Debian's Chromium at a phone's and a laptop's width, against the whole stack
// (API, redirector, worker as processes; real Redis, BullMQ and PostgreSQL) delivering to a receiver
// on 127.0.0.1 (hence WEBHOOK_ALLOW_PRIVATE=1). axe-core checks every state on the way.
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../packages/client/src/index.js';
import { checkPage, launchChromium, openPage } from '@deeplink/test-kit/browser';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';

/** What the receiver got: the path, the signature header and the body of each request. */
const received: { path: string; signature: string; body: string }[] = [];
/** Statuses to answer in turn, per path (then 200). */
const answers: Record<string, number[]> = {};
let receiver: Server;
let receiverUrl: string;
let env: TestEnvironment;
let stack: Stack;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      received.push({ path: request.url!, signature: String(request.headers['webhook-signature']), body });
      response.writeHead(answers[request.url!]?.shift() ?? 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  env = await createTestEnvironment({ WEBHOOK_ALLOW_PRIVATE: '1', RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await env?.close();
  receiver?.closeAllConnections();
  receiver?.close();
});

const signed = (secret: string, header: string, body: string) => {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=') as [string, string]));
  return parts.v1 === createHmac('sha256', secret).update(`${parts.t}.${body}`).digest('hex');
};

describe.each([1280, 390])('webhooks at %i px', (width) => {
  let page: Page;
  let problems: string[];
  const email = `hooks-${width}-${Date.now()}@example.com`;
  const password = 'a long enough password';
  const path = `/hooks-${width}`;

  beforeAll(async () => {
    await createClient({ baseUrl: `${stack.apiUrl}/api` }).auth.register({ name: 'Hana Hooks', email, password });
    ({ page, problems } = await openPage(browser.context, width));
    await page.goto(`${stack.apiUrl}/`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });
  afterAll(async () => {
    expect(problems).toEqual([]);
    await page.close();
  });

  it('adds an endpoint, shows its secret once, and logs signed deliveries that can be resent', async () => {
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await expect.poll(() => page.getByText('No endpoints yet.').isVisible()).toBe(true);
    await checkPage(page, width, 'webhooks-empty');

    // An address that is not one is refused next to the field.
    await page.getByLabel('Endpoint URL').fill('ftp://example.com/hook');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect.poll(() => page.locator('#webhook-url-error').isVisible()).toBe(true);
    await checkPage(page, width, 'webhooks-refused');

    // The first delivery fails (the receiver answers 500), its resend succeeds.
    answers[path] = [500];
    await page.getByLabel('Endpoint URL').fill(`${receiverUrl}${path}`);
    await page.getByLabel('Description (optional)').fill('CRM sync');
    await page.getByLabel('Clicks (one event per batch counted)').uncheck();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('new-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await checkPage(page, width, 'webhooks-secret');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.getByTestId('new-secret').count()).toBe(0);

    // A link made through the API: link.created reaches the receiver, signed with that secret.
    const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('deeplink.session')!).token as string);
    const client = createClient({ baseUrl: `${stack.apiUrl}/api`, token });
    await client.links.create({ title: 'Hooked', defaultUrl: 'https://example.com/hooked' });
    await expect.poll(() => received.filter((request) => request.path === path).length, { timeout: 15_000 }).toBe(1);
    const first = received.find((request) => request.path === path)!;
    expect(JSON.parse(first.body).type).toBe('link.created');
    expect(signed(secret, first.signature, first.body)).toBe(true);

    const log = page.getByRole('region', { name: `Deliveries to ${receiverUrl}${path}` });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return log.locator('tbody tr').first().textContent();
        },
        { timeout: 15_000 },
      )
      .toContain('HTTP 500');
    await checkPage(page, width, 'webhooks-delivery-failed');

    await log
      .getByRole('button', { name: /^Resend the link\.created event/ })
      .first()
      .click();
    await expect.poll(() => received.filter((request) => request.path === path).length, { timeout: 15_000 }).toBe(2);
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return log.locator('tbody tr').first().textContent();
        },
        { timeout: 15_000 },
      )
      .toContain('HTTP 200');
    await checkPage(page, width, 'webhooks-delivered');
  });

  it('rotates the secret (both sign for a while), pauses, and deletes the endpoint', async () => {
    // The confirmations are accepted by the page the kit opens.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.getByTestId('new-secret').textContent())!;
    await page.getByRole('button', { name: 'I have saved it' }).click();

    const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('deeplink.session')!).token as string);
    const client = createClient({ baseUrl: `${stack.apiUrl}/api`, token });
    const before = received.filter((request) => request.path === path).length;
    await client.links.create({ title: 'After rotation', defaultUrl: 'https://example.com/rotated' });
    await expect.poll(() => received.filter((request) => request.path === path).length, { timeout: 15_000 }).toBe(before + 1);
    const latest = received.filter((request) => request.path === path).at(-1)!;
    expect(latest.signature.split(',').filter((part) => part.startsWith('v1='))).toHaveLength(2);
    const [, newest] = latest.signature.split(',');
    expect(signed(rotated, `${latest.signature.split(',')[0]},${newest}`, latest.body)).toBe(true);

    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => page.getByText('Paused', { exact: true }).isVisible()).toBe(true);
    await checkPage(page, width, 'webhooks-paused');

    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await expect.poll(() => page.getByText('No endpoints yet.').isVisible()).toBe(true);
    expect(await client.webhooks.list()).toEqual([]);
  });
});
