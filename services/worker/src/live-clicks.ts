import { setTimeout as sleep } from 'node:timers/promises';
import { LIVE_RECENT_CLICKS, type RedisKeys } from '@deeplink/core';
import type { LinksRepository } from '@deeplink/core/db';
import { appendLiveEntry, LIVE_ENTRY_RECENT_CLICKS, type LiveClick, type LiveEntry, type RedisClient } from '@deeplink/core/redis';
import type { Logger } from '@deeplink/core/runtime';
import type { EnrichedClick } from './click-enricher.js';
import type { ClickWebhooks } from './webhooks/click-webhooks.js';

/** A click kept for the live streams: its time and the dimension values they show. */
interface RecentClick {
  ts: number;
  linkId: string;
  dimensions: EnrichedClick['dimensions'];
}

interface LinkClicks {
  clicks: number;
  /** Newest first once trimmed; up to twice LIVE_RECENT_CLICKS between trims. */
  recent: RecentClick[];
}

const newestFirst = (a: RecentClick, b: RecentClick) => b.ts - a.ts;

/** Keeps the LIVE_RECENT_CLICKS newest of a link's clicks, sorting only every so often. */
function trim(link: LinkClicks, force = false): void {
  if (link.recent.length < 2 * LIVE_RECENT_CLICKS && !force) return;
  link.recent.sort(newestFirst);
  link.recent.length = Math.min(link.recent.length, LIVE_RECENT_CLICKS);
}

/**
 * The counted clicks of one batch (or of several, merged) as the live streams need them: per link
 * the number of clicks and its newest few, never an address, agent string or visitor hash.
 */
export class LiveClicks {
  readonly links = new Map<string, LinkClicks>();
  /** When the first of the merged batches was committed. */
  committedAt = 0;

  add(ts: number, click: EnrichedClick): void {
    let link = this.links.get(click.linkId);
    if (!link) this.links.set(click.linkId, (link = { clicks: 0, recent: [] }));
    link.clicks++;
    link.recent.push({ ts, linkId: click.linkId, dimensions: click.dimensions });
    trim(link);
  }

  merge(other: LiveClicks): void {
    if (this.committedAt === 0) this.committedAt = other.committedAt;
    for (const [linkId, theirs] of other.links) {
      const mine = this.links.get(linkId);
      if (!mine) {
        this.links.set(linkId, theirs);
        continue;
      }
      mine.clicks += theirs.clicks;
      mine.recent.push(...theirs.recent);
      trim(mine);
    }
  }
}

const liveClick = ({ ts, linkId, dimensions }: RecentClick): LiveClick => ({
  at: new Date(ts).toISOString(),
  linkId,
  platform: dimensions.platform,
  country: dimensions.country,
  browser: dimensions.browser,
  os: dimensions.os,
  referrer: dimensions.referrer,
});

/** The live entry of one user: their links' clicks of the commit and the newest of them. */
function entryOf(links: [string, LinkClicks][], committedAt: number): LiveEntry {
  const counts: Record<string, number> = {};
  const recent: RecentClick[] = [];
  for (const [linkId, link] of links) {
    counts[linkId] = link.clicks;
    trim(link, true);
    recent.push(...link.recent);
  }
  recent.sort(newestFirst);
  return { at: new Date(committedAt).toISOString(), links: counts, recent: recent.slice(0, LIVE_ENTRY_RECENT_CLICKS).map(liveClick) };
}

/** Links waiting for the next flush beyond which further batches are not published (Redis or PostgreSQL is slow). */
const MAX_PENDING_LINKS = 20_000;
/** How long closing waits for the entries being sent. */
const CLOSE_WAIT_MS = 2_000;
/** A failing publish is logged at most this often; the metric counts every one. */
const FAILURE_LOG_INTERVAL_MS = 10_000;

export type LiveOutcome = 'published' | 'failed' | 'dropped';

/**
 * Publishes what each rollup commit added to the live streams: per user owning a link of it, one
 * entry appended to the user's capped history and announced to the API instances (see
 * @deeplink/core/redis live-clicks.ts). The batches a commit recorded arrive one after the other in
 * the same tick and leave together, with one owner lookup (one indexed query by link ids). Publishing never holds up or fails the
 * rollup: it runs after the commit, off its path, one flush at a time; an error is logged and
 * counted, and the clicks stay safe in the rollups. The same entries are the `click` webhook events
 * of the users with a click endpoint (see webhooks/click-webhooks.ts).
 */
export function createLivePublisher(deps: {
  redis: RedisClient;
  keys: RedisKeys;
  links: Pick<LinksRepository, 'ownersOf'>;
  log: Logger;
  /** Each user entry's fate (a metric). */
  onOutcome?: (outcome: LiveOutcome, entries: number) => void;
  /** The `click` webhooks: each entry also goes to its user's click endpoints, when they have one. */
  clickWebhooks?: ClickWebhooks;
}) {
  const { redis, keys, log, onOutcome = () => {} } = deps;
  let pending: LiveClicks | undefined;
  let flushing: Promise<void> | undefined;
  let lastLogged = Number.NEGATIVE_INFINITY;

  const logFailure = (error: unknown, what: string, message = `live clicks not published (${what}); the rollups have them`) => {
    if (performance.now() - lastLogged < FAILURE_LOG_INTERVAL_MS) return;
    lastLogged = performance.now();
    log.warn({ err: error }, message);
  };

  const send = async (clicks: LiveClicks) => {
    let linkOwners: Map<string, string>;
    try {
      // Read after the commit, not remembered: a link deleted before it (its clicks were not
      // counted) has no owner any more, so the stream never shows a click the rollups left out.
      linkOwners = await deps.links.ownersOf([...clicks.links.keys()]);
    } catch (error) {
      onOutcome('failed', 1);
      logFailure(error, 'link owners unreadable');
      return;
    }
    const byUser = new Map<string, [string, LinkClicks][]>();
    for (const [linkId, link] of clicks.links) {
      const owner = linkOwners.get(linkId);
      if (owner === undefined) continue;
      let mine = byUser.get(owner);
      if (!mine) byUser.set(owner, (mine = []));
      mine.push([linkId, link]);
    }
    const entries = [...byUser].map(([userId, links]) => [userId, entryOf(links, clicks.committedAt)] as const);
    const hooked = deps.clickWebhooks && sendClickWebhooks(deps.clickWebhooks, entries);
    const results = await Promise.allSettled(entries.map(([userId, entry]) => appendLiveEntry(redis, keys, userId, entry)));
    await hooked;
    const failures = results.filter((result) => result.status === 'rejected');
    if (results.length > failures.length) onOutcome('published', results.length - failures.length);
    if (failures.length > 0) {
      onOutcome('failed', failures.length);
      logFailure(failures[0]!.reason, 'Redis error');
    }
  };

  /** Queues the entries of the users with a click endpoint; a failure is logged, the rollups keep the clicks. */
  const sendClickWebhooks = async (hooks: ClickWebhooks, entries: (readonly [string, LiveEntry])[]) => {
    try {
      const subscribers = await hooks.subscribers();
      await hooks.send(entries.filter(([userId]) => subscribers.has(userId)));
    } catch (error) {
      logFailure(error, 'click webhooks', 'click webhooks not queued; the rollups have the clicks');
    }
  };

  const flush = async () => {
    while (pending) {
      const clicks = pending;
      pending = undefined;
      await send(clicks);
    }
    flushing = undefined;
  };

  return {
    /** Called once a batch's clicks are committed (never for a batch recorded before); returns at once. */
    publish(clicks: LiveClicks): void {
      if (clicks.links.size === 0) return;
      clicks.committedAt ||= Date.now();
      if (!pending) pending = clicks;
      else if (pending.links.size + clicks.links.size > MAX_PENDING_LINKS) {
        onOutcome('dropped', 1);
        return;
      } else pending.merge(clicks);
      // The other batches of the same commit settle in this tick: they join before the flush starts.
      flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(flush);
    },
    /**
     * Resolves once what was handed over has been sent (or has failed), or after CLOSE_WAIT_MS: a
     * Redis that does not answer must not hold up the worker's shutdown.
     */
    async close(): Promise<void> {
      const gaveUp = sleep(CLOSE_WAIT_MS, 'gave up', { ref: false });
      while (flushing) if ((await Promise.race([flushing, gaveUp])) === 'gave up') return;
    },
  };
}
export type LivePublisher = ReturnType<typeof createLivePublisher>;
