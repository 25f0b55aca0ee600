import { randomUUID } from 'node:crypto';
import { type ClickEvent, generateShortCode } from '@deeplink/core';
import { linksRepository, type Sql, usersRepository } from '@deeplink/core/db';
import { capturingLogger } from '@deeplink/test-kit/logs';
import { UA } from '@deeplink/test-kit/user-agents';

/** Shared with the other suites' tests. */
export { UA };

export const HOUR = 3_600_000;

/** A user with `count` fresh links; returns the link ids. */
export async function createLinks(sql: Sql, count: number): Promise<string[]> {
  const user = await usersRepository(sql).create({ name: 'Worker test', email: `${randomUUID()}@example.com`, passwordHash: 'x' });
  const links = linksRepository(sql);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await links.create(user!.id, generateShortCode(), { title: `Link ${i}`, defaultUrl: 'https://example.com' })).id);
  }
  return ids;
}

export const click = (linkId: string, overrides: Partial<ClickEvent> = {}): ClickEvent => ({
  linkId,
  ts: Date.UTC(2026, 2, 1, 12, 30),
  ip: '8.8.8.8',
  userAgent: UA.windowsChrome,
  referrer: '',
  ...overrides,
});

export { capturingLogger };
export {
  clickProducer,
  type ClickProducer,
  dimensionTotals,
  rolledUpClicks,
  uniqueVisitors,
  waitForIdle,
} from '@deeplink/test-kit/clicks';
