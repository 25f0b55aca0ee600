import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@deeplink/core';
import { usersRepository, webhooksRepository } from '@deeplink/core/db';
import {
  configuredSecretBox,
  WEBHOOK_DELIVERY_JOB,
  webhookDeliveryJobOptions,
  webhookEventQueue,
  webhookRetryDelayMs,
  webhookSecretBox,
} from '@deeplink/core/webhooks';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { createWorker } from '../src/app.js';
import { isPublicAddress, RefusedAddressError, resolvePublicAddress, UnresolvedHostError } from '@deeplink/core/net';
import { sendRequest } from '../src/webhooks/send-request.js';
import { CLICK_SUBSCRIBERS_TTL_MS, createClickWebhooks } from '../src/webhooks/click-webhooks.js';

describe('webhook target addresses', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.254',
    '0.0.0.0',
    '224.0.0.251',
    '239.255.255.250',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '::127.0.0.1',
    '2002:7f00:1::',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2a00:1450::1'])(
    'accepts %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it('refuses a name any of whose addresses is private and private literal addresses; a name that does not resolve is retried', async () => {
    const lookup = async (host: string) =>
      host === 'mixed.example'
        ? [
            { address: '93.184.216.34', family: 4 },
            { address: '10.0.0.5', family: 4 },
          ]
        : host === 'public.example'
          ? [{ address: '2606:4700:4700::1111', family: 6 }]
          : Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    const refused = (host: string) => resolvePublicAddress(host, { allowPrivate: false, lookup });
    await expect(refused('mixed.example')).rejects.toThrow(
      new RefusedAddressError('mixed.example resolves to 10.0.0.5, which is not a public address'),
    );
    await expect(refused('[::ffff:127.0.0.1]')).rejects.toBeInstanceOf(RefusedAddressError);
    await expect(refused('127.0.0.1')).rejects.toBeInstanceOf(RefusedAddressError);
    await expect(refused('nowhere.example')).rejects.toThrow(new UnresolvedHostError('nowhere.example does not resolve (ENOTFOUND)'));
    expect(await refused('public.example')).toEqual({ address: '2606:4700:4700::1111', family: 6 });
    expect(await resolvePublicAddress('mixed.example', { allowPrivate: true, lookup })).toEqual({ address: '93.184.216.34', family: 4 });
  });

  it('connects to the address it checked, never resolving the name again (no DNS rebinding)', async () => {
    const seen: { host?: string; path?: string }[] = [];
    const server = createServer((request, response) => {
      seen.push({ host: request.headers.host, path: request.url });
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      // The resolver answers a public address once, then the loopback one: a rebinding name.
      const answers = ['93.184.216.34', '127.0.0.1'];
      const lookups: string[] = [];
      const lookup = async (host: string) => {
        lookups.push(host);
        return [{ address: answers.shift() ?? '127.0.0.1', family: 4 }];
      };
      const checked = await resolvePublicAddress('rebind.invalid', { allowPrivate: false, lookup });
      expect(checked.address).toBe('93.184.216.34');
      // The second answer would reach the receiver, but nothing asks for it: the request goes to what was checked
      // (here a public address that does not answer within the timeout) and not to 127.0.0.1.
      const result = await sendRequest(new URL(`http://rebind.invalid:${port}/hook`), checked, '{}', {}, 300);
      expect(result.kind).toBe('failed');
      expect(lookups).toEqual(['rebind.invalid']);
      expect(seen).toEqual([]);
      // And a checked address is used as given: `rebind.invalid` resolves nowhere, yet the request reaches it with its Host.
      const pinned = await sendRequest(new URL(`http://rebind.invalid:${port}/hook`), { address: '127.0.0.1', family: 4 }, '{}', {}, 5_000);
      expect(pinned).toMatchObject({ kind: 'answered', status: 200, body: 'ok' });
      expect(seen).toEqual([{ host: `rebind.invalid:${port}`, path: '/hook' }]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('webhook secrets and retries', () => {
  it('seals secrets so only the same key opens them', () => {
    const box = webhookSecretBox('a key of at least thirty-two characters');
    const sealed = box.seal('whsec_abc');
    expect(sealed).not.toContain('whsec_abc');
    expect(box.seal('whsec_abc')).not.toBe(sealed);
    expect(box.open(sealed)).toBe('whsec_abc');
    expect(webhookSecretBox('another key of at least thirty-two chars').open(sealed)).toBeUndefined();
    expect(box.open(`${sealed.slice(0, -2)}AA`)).toBeUndefined();
    // WEBHOOK_SECRET_KEY when set, else JWT_SECRET: two deployments' boxes differ.
    const jwtOnly = configuredSecretBox({ JWT_SECRET: 'a key of at least thirty-two characters' });
    expect(jwtOnly.open(sealed)).toBe('whsec_abc');
    expect(configuredSecretBox({ JWT_SECRET: 'x'.repeat(32), WEBHOOK_SECRET_KEY: 'y'.repeat(32) }).open(sealed)).toBeUndefined();
  });

  it('waits three times longer before each retry', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => webhookRetryDelayMs(attempt, 60_000) / 60_000)).toEqual([1, 3, 9, 27, 81, 243, 729]);
  });
});

describe('webhook deliveries in the worker', () => {
  let env: TestEnvironment;
  let userId: string;
  const requests: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    requests.push(request.headers);
    request.resume();
    response.writeHead(500).end('down');
  });
  let url: string;

  beforeAll(async () => {
    env = await createTestEnvironment();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    userId = (await usersRepository(env.sql).create({ name: 'Hooks', email: `${randomUUID()}@example.com`, passwordHash: 'x' }))!.id;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await env.close();
  });

  /** An endpoint of the test's user on `target` and one delivery to it, queued. */
  const queueDelivery = async (target: string, secret: string) => {
    const webhooks = webhooksRepository(env.sql);
    const endpoint = await webhooks.create(userId, { url: target, events: ['link.created'], enabled: true, secret }, 100);
    const [deliveryId] = await webhooks.createDeliveries([
      { endpointId: endpoint.id, event: 'link.created', eventId: `evt_${randomUUID()}`, payload: '{}' },
    ]);
    const queue = webhookEventQueue(env.redis, env.config.QUEUE_PREFIX);
    await queue.queue.add(WEBHOOK_DELIVERY_JOB, { deliveryId: deliveryId! }, webhookDeliveryJobOptions(deliveryId!));
    await queue.close();
    return { endpoint, deliveryId: deliveryId! };
  };
  const delivery = async (id: string) => (await webhooksRepository(env.sql).findDelivery(id))!.delivery;

  it('refuses a private target without WEBHOOK_ALLOW_PRIVATE, and a secret it cannot open, at once and for good', async () => {
    const config = loadConfig({ ...env.env, WEBHOOK_RETRY_BASE_MS: '1' });
    const worker = await createWorker({ config, sql: env.sql, redis: env.redis, schedule: false });
    try {
      const refused = await queueDelivery(url, configuredSecretBox(config).seal('whsec_x'));
      const unreadable = await queueDelivery(url, webhookSecretBox('not the key of this deployment, at all').seal('whsec_x'));
      await expect.poll(async () => (await delivery(refused.deliveryId)).status, { timeout: 10_000 }).toBe('failed');
      await expect.poll(async () => (await delivery(unreadable.deliveryId)).status, { timeout: 10_000 }).toBe('failed');
      expect(await delivery(refused.deliveryId)).toMatchObject({
        attempts: 1,
        responseStatus: null,
        error: '127.0.0.1 is not a public address',
      });
      expect((await delivery(unreadable.deliveryId)).error).toMatch(/cannot be read .* rotate it/);
      expect(requests).toEqual([]);
    } finally {
      await worker.close();
    }
  });

  it('fails a delivery for good after its eighth attempt', async () => {
    const config = loadConfig({ ...env.env, WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '1' });
    const worker = await createWorker({ config, sql: env.sql, redis: env.redis, schedule: false });
    try {
      const { deliveryId } = await queueDelivery(url, configuredSecretBox(config).seal('whsec_x'));
      await expect.poll(async () => (await delivery(deliveryId)).status, { timeout: 15_000 }).toBe('failed');
      expect(await delivery(deliveryId)).toMatchObject({ attempts: 8, responseStatus: 500, responseBody: 'down' });
      expect(requests).toHaveLength(8);
    } finally {
      await worker.close();
    }
  });

  it('prunes deliveries past the retention and past the newest per endpoint', async () => {
    const config = loadConfig({ ...env.env, WEBHOOK_DELIVERY_RETENTION_DAYS: '30', WEBHOOK_DELIVERIES_PER_ENDPOINT: '2' });
    const webhooks = webhooksRepository(env.sql);
    const endpoint = await webhooks.create(userId, { url, events: ['click'], enabled: false, secret: 'sealed' }, 100);
    const ids = await webhooks.createDeliveries(
      [0, 1, 2, 3].map((i) => ({ endpointId: endpoint.id, event: 'click' as const, eventId: `evt_prune_${i}`, payload: '{}' })),
    );
    // One older than the retention; of the three others, the oldest is past the newest two.
    await env.sql`UPDATE webhook_deliveries SET created_at = now() - interval '31 days' WHERE id = ${ids[0]!}`;
    await env.sql`UPDATE webhook_deliveries SET created_at = now() - interval '2 days' WHERE id = ${ids[1]!}`;
    const worker = await createWorker({ config, sql: env.sql, redis: env.redis, schedule: false });
    try {
      const task = worker.tasks.find((t) => t.name === 'prune-webhook-deliveries')!;
      expect(await task.run()).toEqual({ removed: 2 });
      const left = await env.sql<{ id: string }[]>`SELECT id FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id} ORDER BY id`;
      expect(left.map((row) => row.id)).toEqual([ids[2]!, ids[3]!].sort());
    } finally {
      await worker.close();
    }
  });

  it('reads which accounts want click events once per TTL, not per commit', async () => {
    const webhooks = webhooksRepository(env.sql);
    let reads = 0;
    let clock = 1_000_000;
    const clicks = createClickWebhooks({
      webhooks: {
        clickSubscribers: () => {
          reads++;
          return webhooks.clickSubscribers();
        },
      },
      events: { sendMany: async () => {} },
      now: () => clock,
    });
    const before = await clicks.subscribers();
    expect(before.has(userId)).toBe(false);
    await webhooks.create(userId, { url, events: ['click'], enabled: true, secret: 'sealed' }, 100);
    // Commits within the TTL use the list read first, whatever changed meanwhile.
    for (let commit = 0; commit < 50; commit++) expect((await clicks.subscribers()).has(userId)).toBe(false);
    expect(reads).toBe(1);
    // Past it, the next commit starts a read in the background and uses the old list once more.
    clock += CLICK_SUBSCRIBERS_TTL_MS;
    await clicks.subscribers();
    await expect.poll(async () => (await clicks.subscribers()).has(userId)).toBe(true);
    expect(reads).toBe(2);
  });

  it('goes with the account: endpoints and their deliveries', async () => {
    const doomed = (await usersRepository(env.sql).create({ name: 'Gone', email: `${randomUUID()}@example.com`, passwordHash: 'x' }))!;
    const webhooks = webhooksRepository(env.sql);
    const endpoint = await webhooks.create(doomed.id, { url, events: ['click'], enabled: true, secret: 'sealed' }, 100);
    await webhooks.createDeliveries([{ endpointId: endpoint.id, event: 'click', eventId: 'evt_gone', payload: '{}' }]);
    await env.sql`DELETE FROM users WHERE id = ${doomed.id}`;
    expect(await env.sql`SELECT 1 FROM webhook_endpoints WHERE user_id = ${doomed.id}`).toHaveLength(0);
    expect(await env.sql`SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id}`).toHaveLength(0);
  });
});
