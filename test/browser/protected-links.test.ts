import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../packages/client/src/index.js';
import { checkPage, launchChromium, openPage } from '@deeplink/test-kit/browser';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';

const SHOP = 'https://shop.example.test';

let env: TestEnvironment;
let stack: Stack;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  env = await createTestEnvironment({ RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await env?.close();
});

describe.each([1280, 390])('a protected, capped link at %i px', (width) => {
  const email = `guard-${width}-${Date.now()}@example.com`;
  const password = 'a long enough password';
  let shortUrl: string;

  it('is made through the form, which says what it does on the link page', async () => {
    await createClient({ baseUrl: `${stack.apiUrl}/api` }).auth.register({ name: 'Gil Guard', email, password });
    const { page, problems } = await openPage(browser.context, width);
    await page.goto(`${stack.apiUrl}/`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.goto(`${stack.apiUrl}/links/new`);
    await page.getByLabel(/^Title/).fill(`Members only ${width}`);
    await page.getByLabel('Default URL').fill(`${SHOP}/spring`);
    await page.getByLabel('Password', { exact: true }).fill('open sesame');
    await page.getByLabel('Click cap').fill('2');
    await page.getByLabel('Past the cap, send visitors to').fill(`${SHOP}/sold-out`);
    await checkPage(page, width, 'link-form-guarded');
    await page.getByRole('button', { name: 'Create link', exact: true }).click();
    await page.getByRole('heading', { name: `Members only ${width}` }).waitFor();
    expect(await page.getByText('Asks visitors for a password first').isVisible()).toBe(true);
    expect(await page.getByText(`After 2 clicks, sends visitors to ${SHOP}/sold-out.`).isVisible()).toBe(true);
    shortUrl = (await page.getByTestId('short-url').textContent())!;
    // Editing shows the password as set without showing it, and can remove it.
    await page.getByRole('link', { name: 'Edit' }).click();
    expect(await page.getByLabel('New password').inputValue()).toBe('');
    expect(await page.getByLabel('Remove the password').isVisible()).toBe(true);
    await checkPage(page, width, 'link-form-guarded-edit');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('asks for the password, refuses a wrong one, opens on the right one, then sends visitors past the cap on', async () => {
    const { page, problems } = await openPage(browser.context, width);
    const reached: string[] = [];
    await page.route(`${SHOP}/**`, (route) => {
      reached.push(route.request().url());
      return route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Shop</title><main><h1>Shop</h1></main>' });
    });
    const form = await page.goto(shortUrl);
    expect(form!.status()).toBe(200);
    expect(form!.headers()['content-security-policy']).toContain("default-src 'none'");
    await page.getByRole('heading', { name: 'This link is protected' }).waitFor();
    await checkPage(page, width, 'password-page');

    await page.getByLabel('Password').fill('not it');
    const [refused] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Open the link' }).click()]);
    expect(refused!.status()).toBe(401);
    expect(await page.getByRole('alert').textContent()).toMatch(/\S/);
    await checkPage(page, width, 'password-page-wrong');
    expect(reached).toEqual([]);

    await page.getByLabel('Password').fill('open sesame');
    await page.getByRole('button', { name: 'Open the link' }).click();
    await page.waitForURL(`${SHOP}/spring`);

    expect(problems).toEqual([]);
    await page.close();

    // The pass cookie (the browser keeps it for the short URL): the next visit is sent straight on,
    // the cap's second click; the third is past the cap. Read from the short URL's own answer (the
    // shop is not on this machine's network).
    for (const expected of [`${SHOP}/spring`, `${SHOP}/sold-out`]) {
      const tab = await openPage(browser.context, width);
      const [answer] = await Promise.all([
        tab.page.waitForResponse((response) => response.url() === shortUrl),
        tab.page.goto(shortUrl, { waitUntil: 'commit' }).catch(() => {}),
      ]);
      expect(answer.status()).toBe(302);
      expect(answer.headers().location).toBe(expected);
      await tab.page.close();
    }
    expect(new Set(reached)).toEqual(new Set([`${SHOP}/spring`]));
  });
});
