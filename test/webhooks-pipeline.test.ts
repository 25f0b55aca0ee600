// Webhooks through the whole product: the API, the redirector and the worker as real processes
// from their bundles. A link made through the API and visited through the redirector reaches a
// receiver on 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE=1) as a signed link.created and click events.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WebhookEvent } from '@deeplink/core';
import { verifyWebhookSignature } from '@deeplink/core/webhooks';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

let env: TestEnvironment;
let stack: Stack;
const received: { headers: IncomingHttpHeaders; body: string; event: WebhookEvent }[] = [];
const receiver = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
  request.on('end', () => {
    received.push({ headers: request.headers, body, event: JSON.parse(body) as WebhookEvent });
    response.writeHead(204).end();
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  env = await createTestEnvironment({ TRUST_PROXY: '1', WEBHOOK_ALLOW_PRIVATE: '1' });
  stack = await startStack(env.env);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await env?.close();
  await new Promise((resolve) => receiver.close(resolve));
});

const api = async (path: string, token: string | undefined, body: object) => {
  const response = await fetch(`${stack.apiUrl}/api${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  expect(response.status, path).toBe(201);
  return ((await response.json()) as { data: Record<string, any> }).data;
};

it('delivers a link made through the API and its visits through the redirector, signed, without addresses', async () => {
  const { token } = await api('/auth/register', undefined, { name: 'Hooks', email: 'hooks@example.com', password: 'hooks password' });
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
  const { webhook } = await api('/webhooks', token, { url: receiverUrl, events: ['link.created', 'click'] });
  const { link } = await api('/links', token, { title: 'Visited', defaultUrl: 'https://example.com/visited' });
  for (const address of ['8.8.8.8', '1.1.1.1', '81.2.69.160']) {
    const visit = await fetch(link.url, { redirect: 'manual', headers: { 'user-agent': UA.windowsChrome, 'x-forwarded-for': address } });
    expect(visit.status).toBe(302);
  }
  const clicks = () =>
    received
      .filter((r) => r.event.type === 'click')
      .reduce((sum, r) => sum + (r.event.type === 'click' ? (r.event.data.links[link.id] ?? 0) : 0), 0);
  await expect.poll(clicks, { timeout: 30_000, interval: 100 }).toBe(3);
  expect(received.filter((r) => r.event.type === 'link.created').map((r) => r.event.data)).toEqual([
    expect.objectContaining({ link: expect.objectContaining({ id: link.id, url: link.url }) }),
  ]);
  for (const { headers, body } of received) {
    expect(verifyWebhookSignature(String(headers['webhook-signature']), body, webhook.secret)).toBe(true);
    expect(body).not.toMatch(/8\.8\.8\.8|1\.1\.1\.1|81\.2\.69\.160|Mozilla/);
  }
}, 60_000);
