import { COMBINATION_COLUMNS, COMBINATION_REFERRERS_PER_HOUR, type CombinationColumn } from '../analytics/combinations.js';
import { DIMENSION_NAMES, type DimensionValues, OTHER } from '../analytics/dimensions.js';
import type { AppEventName, AppEventPlatform } from '../queue/app-events.js';
import type { Sql, TransactionSql } from './client.js';
import { monthStart, rollupPartitions } from './rollup-partitions.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The first key of the advisory locks on a UTC day of combination rows (the second is the day's
 * number since 1970-01-01): taken shared by each batch transaction for the days it writes, and
 * exclusive by the roll of a day, so that the two never overlap (click_combination_days,
 * migration 019).
 */
export const COMBINATION_DAY_LOCK = 0x636f6d62; // 'comb'

/** One counted click, reduced to what the rollups keep. */
export interface RollupClick {
  linkId: string;
  /** Start of the click's UTC hour, epoch milliseconds. */
  bucket: number;
  /** Hash of the visitor, fed to the unique-visitor sketches; never contains a space. */
  visitor: string;
  /** Its value of every dimension of the registry (a new dimension does not compile until the worker fills it in). */
  dimensions: DimensionValues;
}

/** One visit of a link-preview crawler: counted apart from clicks. */
export interface RollupPreview {
  linkId: string;
  /** Start of the visit's UTC hour, epoch milliseconds. */
  bucket: number;
}

/** One app event, reduced to what the rollups keep. */
export interface RollupAppEvent {
  linkId: string;
  /** Start of the event's UTC hour, epoch milliseconds. */
  bucket: number;
  name: AppEventName;
  platform: AppEventPlatform;
  /**
   * For an event that came without a click (an app open), its id: recorded, so that the event
   * counts once whichever batch brings it. Undefined for a click's REDIRECT, which counts once
   * with its batch id.
   */
  eventId?: string;
  /**
   * Who the event was, fed to the event's unique-count sketch: its click's visitor hash for a
   * REDIRECT, else its install's hash or its own id. Never contains a space.
   */
  visitor: string;
}

/**
 * One visit sent to an app store with an install token (install_clicks): what the app's first
 * launch can claim. Nothing in it is the token, the address or the agent string.
 */
export interface RollupInstallClick {
  /** SHA-256 of the token (hashInstallToken), hex. */
  tokenHash: string;
  linkId: string;
  platform: 'ANDROID' | 'IOS';
  /** Epoch milliseconds of the visit. */
  clickedAt: number;
  /** Epoch milliseconds after which the token can no longer be claimed (INSTALL_TOKEN_TTL_DAYS). */
  expiresAt: number;
  /** The fingerprint facts (DeviceFacts), each absent when the visit did not tell it. */
  network?: string;
  osVersion?: string;
  deviceFamily?: string;
  language?: string;
}

/** A click batch ready to be added to the rollups. */
export interface RollupBatch {
  batchId: string;
  /** Clicks the batch carried, bots included; kept with the batch id for auditing. */
  receivedClicks: number;
  /** The clicks to count: bots and malformed events are already left out. */
  clicks: RollupClick[];
  /** Visits of link-preview crawlers (left out of `clicks`). */
  previews?: RollupPreview[];
  /** App events the batch carried, for links that exist (checked in SQL). */
  events?: RollupAppEvent[];
  /** Store visits that handed out an install token, for links that exist (checked in SQL). */
  installs?: RollupInstallClick[];
}

type Counts = Map<string, number>;

interface HourGroup {
  clicks: number;
  /** Per dimension, in DIMENSION_NAMES order: value → clicks. */
  counts: Counts[];
  combinations: Combinations;
}

const count = (counts: Counts, value: string) => {
  counts.set(value, (counts.get(value) ?? 0) + 1);
};

/** The separator of a combination's values in its key: no value holds it (PostgreSQL text cannot store NUL). */
const SEPARATOR = '\0';

/**
 * An hour's clicks by combination of dimension values, and who they were. Kept compact: the sums
 * of a transaction hold tens of thousands of combinations, and an object per combination with its
 * values made them five times the size of the other sums. Each combination is found by its key
 * (its values joined in COMBINATION_COLUMNS order) and holds the values of its first click (that
 * click's own object, not a copy: the arrays for PostgreSQL take the values from it rather than
 * splitting the key, which made a string per value), a click count and its visitor, or a set of
 * them once a second one comes (most have one).
 */
class Combinations {
  readonly #positions = new Map<string, number>();
  readonly values: DimensionValues[] = [];
  readonly clicks: number[] = [];
  readonly visitors: (string | Set<string>)[] = [];

  add(d: DimensionValues, visitor: string): void {
    // Joined from an array, the key is one flat string; a template literal would keep a tree of
    // eleven partial strings for every combination, four times the memory.
    const key = COMBINATION_COLUMNS.map((column) => d[column]).join(SEPARATOR);
    const at = this.#positions.get(key);
    if (at === undefined) {
      this.#positions.set(key, this.values.length);
      this.values.push(d);
      this.clicks.push(1);
      this.visitors.push(visitor);
      return;
    }
    this.clicks[at]!++;
    const seen = this.visitors[at]!;
    if (typeof seen !== 'string') seen.add(visitor);
    else if (seen !== visitor) this.visitors[at] = new Set([seen, visitor]);
  }
}

/**
 * Clicks summed by link and UTC hour, by link, hour and dimension value, and by link, hour and
 * combination of all the dimensions' values, so the database receives one row per group instead
 * of one per click. The worker adds each batch's clicks as the
 * batch arrives, so the sums of the next transaction are built while the current one is written.
 */
export class RollupRows {
  readonly #links = new Map<string, Map<number, HourGroup>>();
  /** Preview counts by link, then hour. */
  readonly #previews = new Map<string, Map<number, number>>();
  /** Counts and visitors of the events that came with clicks, by link, hour, event and platform (a space-free key). */
  readonly #eventCounts = new Map<string, { event: RollupAppEvent; count: number; visitors: Set<string> }>();
  /** Events with an id of their own, one each: SQL counts only those whose id is new. */
  readonly #identifiedEvents = new Map<string, RollupAppEvent>();
  /** Install clicks by token hash: a token is stored once. */
  readonly #installs = new Map<string, RollupInstallClick>();

  add(
    clicks: readonly RollupClick[],
    previews: readonly RollupPreview[] = [],
    events: readonly RollupAppEvent[] = [],
    installs: readonly RollupInstallClick[] = [],
  ): this {
    for (const install of installs) if (!this.#installs.has(install.tokenHash)) this.#installs.set(install.tokenHash, install);
    for (const event of events) {
      if (event.eventId !== undefined) {
        // The same id twice (an open retried while the first was queued) is one event.
        if (!this.#identifiedEvents.has(event.eventId)) this.#identifiedEvents.set(event.eventId, event);
        continue;
      }
      const key = `${event.linkId} ${event.bucket} ${event.name} ${event.platform}`;
      const counted = this.#eventCounts.get(key);
      if (counted) {
        counted.count++;
        counted.visitors.add(event.visitor);
      } else {
        this.#eventCounts.set(key, { event, count: 1, visitors: new Set([event.visitor]) });
      }
    }
    for (const { linkId, bucket } of previews) {
      let hours = this.#previews.get(linkId);
      if (!hours) this.#previews.set(linkId, (hours = new Map()));
      hours.set(bucket, (hours.get(bucket) ?? 0) + 1);
    }
    for (const { linkId, bucket, visitor, dimensions } of clicks) {
      let hours = this.#links.get(linkId);
      if (!hours) this.#links.set(linkId, (hours = new Map()));
      let group = hours.get(bucket);
      if (!group) {
        group = { clicks: 0, counts: DIMENSION_NAMES.map(() => new Map()), combinations: new Combinations() };
        hours.set(bucket, group);
      }
      group.clicks++;
      const { counts } = group;
      for (let i = 0; i < DIMENSION_NAMES.length; i++) count(counts[i]!, dimensions[DIMENSION_NAMES[i]!]);
      group.combinations.add(dimensions, visitor);
    }
    return this;
  }

  /** The UTC days the sums have clicks in, as day numbers since 1970-01-01, in order. */
  days(): number[] {
    const days = new Set<number>();
    for (const hours of this.#links.values()) for (const bucket of hours.keys()) days.add(Math.floor(bucket / DAY_MS));
    return [...days].sort((a, b) => a - b);
  }

  /** The start of each UTC month the sums have clicks in. */
  months(): Date[] {
    const starts = new Set<number>();
    for (const hours of this.#links.values()) for (const bucket of hours.keys()) starts.add(monthStart(new Date(bucket)).getTime());
    for (const { bucket } of this.#events()) starts.add(monthStart(new Date(bucket)).getTime());
    return [...starts].map((start) => new Date(start));
  }

  /**
   * The sums as the arrays the upsert unnests: one entry per (link, hour) group (its visitors are
   * those of its combinations), one per group and dimension value, and one per group and combination, the
   * latter two naming their group by position (from 1). `combinations.columns` holds each
   * column's values and `combinations.visitor` each combination's first visitor; `moreVisitors`
   * lists the others, one entry each, naming their combination by position (from 1).
   */
  toArrays() {
    const groups = { links: [] as string[], hours: [] as number[], clicks: [] as number[] };
    const values = { group: [] as number[], dimension: [] as string[], value: [] as string[], clicks: [] as number[] };
    const columns = COMBINATION_COLUMNS.map(() => [] as string[]);
    const combinations = {
      group: [] as number[],
      columns: Object.fromEntries(COMBINATION_COLUMNS.map((column, i) => [column, columns[i]!])) as Record<CombinationColumn, string[]>,
      clicks: [] as number[],
      visitor: [] as string[],
    };
    const moreVisitors = { combination: [] as number[], visitor: [] as string[] };
    for (const [linkId, hours] of this.#links) {
      for (const [bucket, group] of hours) {
        groups.links.push(linkId);
        groups.hours.push(bucket / HOUR_MS);
        groups.clicks.push(group.clicks);
        const position = groups.links.length;
        for (let i = 0; i < DIMENSION_NAMES.length; i++) {
          const dimension = DIMENSION_NAMES[i]!;
          for (const [value, clicks] of group.counts[i]!) {
            values.group.push(position);
            values.dimension.push(dimension);
            values.value.push(value);
            values.clicks.push(clicks);
          }
        }
        const { clicks, visitors } = group.combinations;
        const combinationValues = group.combinations.values;
        for (let at = 0; at < combinationValues.length; at++) {
          combinations.group.push(position);
          const values = combinationValues[at]!;
          for (let i = 0; i < COMBINATION_COLUMNS.length; i++) columns[i]!.push(values[COMBINATION_COLUMNS[i]!]);
          combinations.clicks.push(clicks[at]!);
          const seen = visitors[at]!;
          if (typeof seen === 'string') {
            combinations.visitor.push(seen);
            continue;
          }
          let first = true;
          for (const visitor of seen) {
            if (first) combinations.visitor.push(visitor);
            else {
              moreVisitors.combination.push(combinations.clicks.length);
              moreVisitors.visitor.push(visitor);
            }
            first = false;
          }
        }
      }
    }
    const previews = { links: [] as string[], hours: [] as number[], counts: [] as number[] };
    for (const [linkId, hours] of this.#previews) {
      for (const [bucket, count] of hours) {
        previews.links.push(linkId);
        previews.hours.push(bucket / HOUR_MS);
        previews.counts.push(count);
      }
    }
    const events = {
      links: [] as string[],
      hours: [] as number[],
      names: [] as string[],
      platforms: [] as string[],
      ids: [] as string[],
      counts: [] as number[],
      visitors: [] as string[],
    };
    const addEvent = (event: RollupAppEvent, count: number, visitors: string) => {
      events.links.push(event.linkId);
      events.hours.push(event.bucket / HOUR_MS);
      events.names.push(event.name);
      events.platforms.push(event.platform);
      events.ids.push(event.eventId ?? '');
      events.counts.push(count);
      events.visitors.push(visitors);
    };
    for (const { event, count, visitors } of this.#eventCounts.values()) addEvent(event, count, [...visitors].join(' '));
    for (const event of this.#identifiedEvents.values()) addEvent(event, 1, event.visitor);
    return { groups, values, combinations, moreVisitors, previews, events, installs: this.#installArrays() };
  }

  /** The install clicks as the insert unnests them, '' for an absent fact. */
  #installArrays() {
    const installs = {
      hashes: [] as string[],
      links: [] as string[],
      platforms: [] as string[],
      clickedAt: [] as number[],
      expiresAt: [] as number[],
      networks: [] as string[],
      osVersions: [] as string[],
      deviceFamilies: [] as string[],
      languages: [] as string[],
    };
    for (const install of this.#installs.values()) {
      installs.hashes.push(install.tokenHash);
      installs.links.push(install.linkId);
      installs.platforms.push(install.platform);
      installs.clickedAt.push(install.clickedAt);
      installs.expiresAt.push(install.expiresAt);
      installs.networks.push(install.network ?? '');
      installs.osVersions.push(install.osVersion ?? '');
      installs.deviceFamilies.push(install.deviceFamily ?? '');
      installs.languages.push(install.language ?? '');
    }
    return installs;
  }

  /** Every app event summed, one of each kind or id. */
  *#events(): Iterable<RollupAppEvent> {
    for (const { event } of this.#eventCounts.values()) yield event;
    yield* this.#identifiedEvents.values();
  }
}

/** An element of a PostgreSQL array literal: double-quoted, `"` and `\` escaped with a backslash. */
const quote = (value: string): string =>
  value.includes('"') || value.includes('\\') ? `"${value.replace(/["\\]/g, '\\$&')}"` : `"${value}"`;

/**
 * PostgreSQL array literals of the upsert's arrays, sent as text parameters and cast in SQL
 * (`$1::int[]`). postgres.js would escape every element with two regular expressions; the sums have
 * about one dimension row per click, so this does less: numbers need no quoting, and each distinct
 * value string is quoted once (`repeated`), not once per row.
 */
export const pgArray = {
  numbers: (xs: readonly number[]): string => `{${xs.join(',')}}`,
  strings(xs: readonly string[], repeated = false): string {
    if (!repeated) {
      // Most arrays (ids, visitor hashes) need no escaping: joined at once, without a quoted copy of each element first.
      if (xs.some((x) => x.includes('"') || x.includes('\\'))) return `{${xs.map(quote).join(',')}}`;
      return xs.length === 0 ? '{}' : `{"${xs.join('","')}"}`;
    }
    const quoted = new Map<string, string>();
    const parts = new Array<string>(xs.length);
    for (let i = 0; i < xs.length; i++) {
      const x = xs[i]!;
      let part = quoted.get(x);
      if (part === undefined) quoted.set(x, (part = quote(x)));
      parts[i] = part;
    }
    return `{${parts.join(',')}}`;
  },
};

/** work_mem of a rollup transaction (see `settings` in rollupsRepository). */
const ROLLUP_WORK_MEM = '16MB';

/** PostgreSQL's answer to a row for which the partitioned table has no partition. */
const isMissingPartition = (error: unknown): boolean =>
  (error as { code?: string }).code === '23514' && /no partition of relation/.test((error as Error).message);

/**
 * Thrown by recordBatches, which then wrote nothing, when it was given the batches' clicks summed
 * already and some of their ids had been recorded before: those sums hold the repeated batches'
 * clicks too, and cannot be taken apart. Write the batches again one by one.
 */
export class BatchesRecordedBefore extends Error {
  override name = 'BatchesRecordedBefore';
  constructor(readonly recordedBefore: number) {
    super(`${recordedBefore} of the batches were recorded before; write them one by one`);
  }
}

/** The first batch of each id, in order. */
function firstOfEachId(batches: readonly RollupBatch[]): RollupBatch[] {
  const seen = new Set<string>();
  return batches.filter(({ batchId }) => !seen.has(batchId) && seen.add(batchId));
}

/**
 * Limits on each rollup transaction, in milliseconds: PostgreSQL's idle_in_transaction_session_timeout,
 * lock_timeout and statement_timeout, set for the transaction only (SET LOCAL).
 */
export interface RollupTimeouts {
  /** A client that stops between the statements of its transaction (frozen, cut off) loses its session, and the locks it held. */
  idleInTransaction: number;
  /** A statement that waits this long for a lock gives up (isRollupTimeout), and its transaction's locks go. */
  lock: number;
  /** A statement that runs this long, lock waits included, is cancelled (isRollupTimeout). */
  statement: number;
}

/**
 * True for a rollup transaction that timed out waiting for locks or running its statement: it
 * says nothing about the batches, which are fine to write again, together or not.
 */
export const isRollupTimeout = (error: unknown): boolean => {
  const code = (error as { code?: string } | null)?.code;
  return code === '55P03' || code === '57014'; // lock_not_available, query_canceled
};

/**
 * Click rollups and the record of batches already rolled up. SQL for click_hourly, click_daily,
 * their _dimensions and _combinations tables, click_hourly_combination_referrers, link_previews_hourly, app_event_hourly, app_event_daily,
 * processed_batches and processed_app_events is written here and nowhere else, and so are the
 * worker's writes to install_clicks (the rows of store visits, and their pruning).
 * With `timeouts`, each rollup transaction is bounded by them (the worker's writes); without, by
 * the server's settings.
 */
export function rollupsRepository(sql: Sql, { timeouts }: { timeouts?: RollupTimeouts } = {}) {
  /**
   * Sends the transaction's settings ahead of its first statement, in the same round trip: the
   * limits, and two settings the statement runs better with. Without `jit = off`, its estimated
   * cost makes PostgreSQL compile it every time (0.15 s for a transaction of 64,000 clicks, more
   * than the compiled code saved). With the default work_mem (4 MB) its sorts of tens of thousands
   * of combination rows spill to disk; ROLLUP_WORK_MEM holds them. Each sort of the statement may
   * use that much and each hash twice it (hash_mem_multiplier), a few of them at a time.
   *
   * Last (after the limits, which bound its wait), it takes the shared lock of each UTC day of
   * `days` (COMBINATION_DAY_LOCK), in order. Taken here, before the statement that writes, so that
   * the statement's snapshot sees a roll of those days that committed while it waited.
   */
  const settings = (tx: TransactionSql, days: number[]) =>
    tx`SELECT set_config('jit', 'off', true), set_config('work_mem', ${ROLLUP_WORK_MEM}, true)${
      timeouts
        ? tx`, set_config('idle_in_transaction_session_timeout', ${String(timeouts.idleInTransaction)}, true),
              set_config('lock_timeout', ${String(timeouts.lock)}, true),
              set_config('statement_timeout', ${String(timeouts.statement)}, true)`
        : tx``
    }, (SELECT count(pg_advisory_xact_lock_shared(${COMBINATION_DAY_LOCK}, d)) FROM unnest(${pgArray.numbers(days)}::int[]) AS d)`.execute();

  /**
   * One statement: records the ids of `claim`, then, only if every one of them was new, adds
   * `rows` to the hourly and daily rollups. Returns the ids recorded now.
   */
  const claimAndAdd = async (tx: TransactionSql, claim: RollupBatch[], rows: RollupRows): Promise<string[]> =>
    (await claimAndAddStatement(tx, claim, rows)).map((row) => row.batchId);

  /**
   * The statement of claimAndAdd, unsent. Built apart from its wait, so that the arrays it is
   * built from (several megabytes for a large transaction) can go as soon as it is built, while
   * PostgreSQL runs it and the next transaction's sums grow.
   */
  const claimAndAddStatement = (tx: TransactionSql, claim: RollupBatch[], rows: RollupRows) => {
    const { groups, values, combinations, moreVisitors, previews, events, installs } = rows.toArrays();
    const links = pgArray.strings(groups.links);
    const allClaimed = claim.length;
    // Only batches with crawler visits add the statement for them (most have none).
    const previewRows =
      previews.links.length === 0
        ? tx``
        : tx`, previews AS (
        INSERT INTO link_previews_hourly AS t (link_id, bucket, previews)
        SELECT p.link_id, timestamptz 'epoch' + p.hour * interval '1 hour', p.previews
        FROM unnest(${pgArray.strings(previews.links)}::uuid[], ${pgArray.numbers(previews.hours)}::int[], ${pgArray.numbers(previews.counts)}::bigint[])
          AS p(link_id, hour, previews)
        WHERE p.link_id IN (SELECT id FROM live) AND (SELECT count(*) FROM claimed) = ${allClaimed}
        ORDER BY 1, 2
        ON CONFLICT (link_id, bucket) DO UPDATE SET previews = t.previews + excluded.previews
      )`;
    // Only batches with app events add the statements for them (most have none). An event with an
    // id of its own ('' for a click's REDIRECT) counts only when its id is recorded now, and so
    // does its visitor; each row's visitors (joined by spaces) become its sketch, as a click group's do.
    const eventRows =
      events.links.length === 0
        ? tx``
        : tx`, events_in AS (
        SELECT e.link_id, timestamptz 'epoch' + e.hour * interval '1 hour' AS bucket, e.event, e.platform, e.event_id, e.count,
               coalesce((SELECT hll_add_agg(hll_hash_text(v)) FROM string_to_table(e.visitors, ' ') AS v), hll_empty()) AS visitors
        FROM unnest(${pgArray.strings(events.links)}::uuid[], ${pgArray.numbers(events.hours)}::int[],
                    ${pgArray.strings(events.names, true)}::text[], ${pgArray.strings(events.platforms, true)}::text[],
                    ${pgArray.strings(events.ids)}::text[], ${pgArray.numbers(events.counts)}::bigint[],
                    ${pgArray.strings(events.visitors)}::text[])
          AS e(link_id, hour, event, platform, event_id, count, visitors)
        WHERE e.link_id IN (SELECT id FROM live) AND (SELECT count(*) FROM claimed) = ${allClaimed}
      ), new_event_ids AS (
        INSERT INTO processed_app_events (event_id)
        SELECT event_id FROM events_in WHERE event_id <> '' ORDER BY 1
        ON CONFLICT (event_id) DO NOTHING
        RETURNING event_id
      ), event_rows AS (
        SELECT link_id, bucket, event, platform, sum(count) AS count, hll_union_agg(visitors) AS visitors FROM events_in
        WHERE event_id = '' OR event_id IN (SELECT event_id FROM new_event_ids)
        GROUP BY link_id, bucket, event, platform
      ), event_hourly AS (
        INSERT INTO app_event_hourly AS t (link_id, bucket, event, platform, count, visitors)
        SELECT link_id, bucket, event, platform, count, visitors FROM event_rows ORDER BY link_id, bucket, event, platform
        ON CONFLICT (link_id, bucket, event, platform) DO UPDATE
          SET count = t.count + excluded.count, visitors = hll_union(t.visitors, excluded.visitors)
      ), event_daily AS (
        INSERT INTO app_event_daily AS t (link_id, day, event, platform, count, visitors)
        SELECT link_id, (bucket AT TIME ZONE 'UTC')::date AS day, event, platform, sum(count), hll_union_agg(visitors) FROM event_rows
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (link_id, day, event, platform) DO UPDATE
          SET count = t.count + excluded.count, visitors = hll_union(t.visitors, excluded.visitors)
      )`;
    // Only batches with store visits that handed out install tokens add the insert for them. A
    // token is stored once (a batch is claimed once, and ON CONFLICT covers the rest); the
    // table's delete trigger on links sees these rows, as `live` has locked every link written.
    const installRows =
      installs.hashes.length === 0
        ? tx``
        : tx`, installs AS (
        INSERT INTO install_clicks (token_hash, link_id, platform, clicked_at, expires_at, network, os_version, device_family, language)
        SELECT decode(i.token_hash, 'hex'), i.link_id, i.platform,
               timestamptz 'epoch' + i.clicked_at * interval '1 millisecond',
               timestamptz 'epoch' + i.expires_at * interval '1 millisecond',
               nullif(i.network, ''), nullif(i.os_version, ''), nullif(i.device_family, ''), nullif(i.language, '')
        FROM unnest(${pgArray.strings(installs.hashes)}::text[], ${pgArray.strings(installs.links)}::uuid[],
                    ${pgArray.strings(installs.platforms, true)}::text[], ${pgArray.numbers(installs.clickedAt)}::bigint[],
                    ${pgArray.numbers(installs.expiresAt)}::bigint[], ${pgArray.strings(installs.networks)}::text[],
                    ${pgArray.strings(installs.osVersions, true)}::text[], ${pgArray.strings(installs.deviceFamilies, true)}::text[],
                    ${pgArray.strings(installs.languages, true)}::text[])
          AS i(token_hash, link_id, platform, clicked_at, expires_at, network, os_version, device_family, language)
        WHERE i.link_id IN (SELECT id FROM live) AND (SELECT count(*) FROM claimed) = ${allClaimed}
        ORDER BY 1
        ON CONFLICT (token_hash) DO NOTHING
      )`;
    const column = (name: CombinationColumn) => pgArray.strings(combinations.columns[name], true);
    // The combination rows, and their referrer bound (COMBINATION_REFERRERS_PER_HOUR,
    // docs/analytics.md, "Filters"). The hosts a link-hour names already are read from their own
    // small table, on its key, rather than from the hour's combination rows (every combination of
    // a busy hour). Hosts new to the hour take its free places, those with the most clicks in this
    // transaction first; the clicks of the others are counted under OTHER (and so are those of a
    // value that is OTHER already). The names read are the statement's snapshot: two transactions
    // writing the same hour at once can each take its last free places, so an hour can name a few
    // hosts more than the bound; no click is lost.
    //
    // Each combination's sketch is its first visitor added to the sketch of the others, if any:
    // most have one visitor, and an aggregate's state per row would cost ten times more. A
    // group's sketch (its link-hour's visitors) is the union of its combinations' sketches: every
    // visitor of the group is a visitor of one of them, so each is sent and hashed once. Both
    // aggregates read their rows sorted: one sketch state at a time, where hashing kept one per
    // group and spilled them to disk past work_mem.
    const combinationSketches = tx`, combination_input AS (
        SELECT * FROM unnest(${pgArray.numbers(combinations.group)}::int[],
                    ${column('platform')}::text[], ${column('device')}::text[], ${column('country')}::text[],
                    ${column('browser')}::text[], ${column('os')}::text[], ${column('referrer')}::text[],
                    ${pgArray.numbers(combinations.clicks)}::bigint[], ${pgArray.strings(combinations.visitor)}::text[])
          WITH ORDINALITY AS c(n, platform, device, country, browser, os, referrer, clicks, visitor, i)
      ), more_visitors AS (
        SELECT m.i, hll_add_agg(hll_hash_text(m.visitor)) AS visitors
        FROM (
          SELECT * FROM unnest(${pgArray.numbers(moreVisitors.combination)}::int[], ${pgArray.strings(moreVisitors.visitor)}::text[])
            AS m(i, visitor) ORDER BY i
        ) m
        GROUP BY m.i
      ), combination_sketches AS (
        SELECT c.n, c.platform, c.device, c.country, c.browser, c.os, c.referrer, c.clicks,
               hll_add(coalesce(m.visitors, hll_empty()), hll_hash_text(c.visitor)) AS visitors
        FROM combination_input c LEFT JOIN more_visitors m ON m.i = c.i
      ), group_sketches AS (
        SELECT n, hll_union_agg(visitors) AS visitors FROM (SELECT n, visitors FROM combination_sketches ORDER BY n) s GROUP BY n
      )`;
    const combinationRows = tx`, hour_hosts AS (
        SELECT g.link_id, g.bucket, c.referrer, sum(c.clicks) AS clicks
        FROM combination_input c JOIN groups g ON g.n = c.n
        WHERE c.referrer NOT IN ('direct', ${OTHER}::text) GROUP BY g.link_id, g.bucket, c.referrer
      ), named_before AS (
        SELECT h.link_id, h.bucket, coalesce(k.referrers, '{}') AS referrers
        FROM (SELECT DISTINCT link_id, bucket FROM hour_hosts) h
        CROSS JOIN LATERAL (
          SELECT array_agg(r.referrer) AS referrers FROM click_hourly_combination_referrers r
          WHERE r.link_id = h.link_id AND r.bucket = h.bucket
        ) k
      ), new_hosts AS (
        SELECT h.link_id, h.bucket, h.referrer,
               cardinality(n.referrers) + row_number() OVER (PARTITION BY h.link_id, h.bucket ORDER BY h.clicks DESC, h.referrer) AS place
        FROM hour_hosts h JOIN named_before n ON n.link_id = h.link_id AND n.bucket = h.bucket
        WHERE h.referrer <> ALL(n.referrers)
      ), named_now AS (
        INSERT INTO click_hourly_combination_referrers (link_id, bucket, referrer)
        SELECT link_id, bucket, referrer FROM new_hosts WHERE place <= ${COMBINATION_REFERRERS_PER_HOUR}::int ORDER BY 1, 2, 3
        ON CONFLICT (link_id, bucket, referrer) DO NOTHING
      ), combinations AS (
        SELECT g.link_id, g.bucket, g.day, c.platform, c.device, c.country, c.browser, c.os, c.referrer, c.clicks, c.visitors,
               c.referrer = ${OTHER}::text
                 OR (g.link_id, g.bucket, c.referrer) IN (
                      SELECT link_id, bucket, referrer FROM new_hosts WHERE place > ${COMBINATION_REFERRERS_PER_HOUR}::int) AS fold
        FROM combination_sketches c
        JOIN groups g ON g.n = c.n
      ), combination_rows AS NOT MATERIALIZED (
        SELECT link_id, bucket, day, platform, device, country, browser, os, referrer, clicks, visitors FROM combinations WHERE NOT fold
        UNION ALL
        SELECT link_id, bucket, day, platform, device, country, browser, os, ${OTHER}::text, sum(clicks), hll_union_agg(visitors)
        FROM combinations WHERE fold GROUP BY link_id, bucket, day, platform, device, country, browser, os
      ), hourly_combinations AS (
        INSERT INTO click_hourly_combinations AS t (link_id, bucket, platform, device, country, browser, os, referrer, clicks, visitors)
        SELECT link_id, bucket, platform, device, country, browser, os, referrer, clicks, visitors FROM combination_rows
        ORDER BY link_id, bucket, platform, device, country, browser, os, referrer
        ON CONFLICT (link_id, bucket, platform, device, country, browser, os, referrer) DO UPDATE
          SET clicks = t.clicks + excluded.clicks, visitors = hll_union(t.visitors, excluded.visitors)
      ), combination_days AS (
        -- The day rows of click_combination_days: a day not rolled yet gets its daily
        -- combination rows from the roll (rollCombinationDays), once, not here.
        INSERT INTO click_combination_days (day) SELECT DISTINCT day FROM groups ORDER BY 1
        ON CONFLICT (day) DO NOTHING
      ), late_link_days AS (
        -- The link-days of days rolled already (a late batch): their daily rows are written here,
        -- summed first where this transaction has several hours of one. The day locks taken
        -- before this statement make sure a roll committed before it is seen.
        SELECT link_id, day, count(*) > 1 AS several FROM groups
        WHERE day IN (SELECT day FROM click_combination_days WHERE rolled AND day IN (SELECT day FROM groups))
        GROUP BY link_id, day
      ), daily_combinations AS (
        INSERT INTO click_daily_combinations AS t (link_id, day, platform, device, country, browser, os, referrer, clicks, visitors)
        SELECT * FROM (
          SELECT link_id, day, platform, device, country, browser, os, referrer, clicks, visitors FROM combination_rows
          WHERE (link_id, day) IN (SELECT link_id, day FROM late_link_days WHERE NOT several)
          UNION ALL
          SELECT link_id, day, platform, device, country, browser, os, referrer, sum(clicks), hll_union_agg(visitors) FROM combination_rows
          WHERE (link_id, day) IN (SELECT link_id, day FROM late_link_days WHERE several)
          GROUP BY link_id, day, platform, device, country, browser, os, referrer
        ) d
        ORDER BY link_id, day, platform, device, country, browser, os, referrer
        ON CONFLICT (link_id, day, platform, device, country, browser, os, referrer) DO UPDATE
          SET clicks = t.clicks + excluded.clicks, visitors = hll_union(t.visitors, excluded.visitors)
      )`;
    // Every upsert inserts in key order, so concurrent transactions lock shared rows in the same
    // order and cannot deadlock each other; each takes at most one row per key, as ON CONFLICT
    // requires (the daily rows of several hours are summed first).
    return tx<{ batchId: string }[]>`
      WITH claimed AS (
        INSERT INTO processed_batches (batch_id, clicks)
        SELECT * FROM unnest(${claim.map((b) => b.batchId)}::text[], ${claim.map((b) => b.receivedClicks)}::int[])
        ORDER BY 1
        ON CONFLICT (batch_id) DO NOTHING
        RETURNING batch_id
      ), live AS MATERIALIZED (
        -- The rollups have no foreign key onto links. Instead the links are locked here as the
        -- key would have locked them, once per link rather than once per row: a link deleted
        -- meanwhile is skipped, and a delete arriving now waits for this transaction and then
        -- removes its rows too.
        SELECT id FROM links WHERE id = ANY(${pgArray.strings([...groups.links, ...previews.links, ...events.links, ...installs.links])}::uuid[]) ORDER BY id FOR KEY SHARE
      )${combinationSketches}, groups AS (
        SELECT g.n, g.link_id, g.bucket, (g.bucket AT TIME ZONE 'UTC')::date AS day, g.clicks, s.visitors
        FROM (
          SELECT u.n, u.link_id, timestamptz 'epoch' + u.hour * interval '1 hour' AS bucket, u.clicks
          FROM unnest(${links}::uuid[], ${pgArray.numbers(groups.hours)}::int[], ${pgArray.numbers(groups.clicks)}::bigint[])
            WITH ORDINALITY AS u(link_id, hour, clicks, n)
        ) g
        JOIN group_sketches s ON s.n = g.n
        WHERE g.link_id IN (SELECT id FROM live) AND (SELECT count(*) FROM claimed) = ${allClaimed}
      )${combinationRows}, dimension_rows AS (
        SELECT g.link_id, g.bucket, g.day, d.dimension, d.value, d.clicks
        FROM unnest(${pgArray.numbers(values.group)}::int[], ${pgArray.strings(values.dimension, true)}::text[],
                    ${pgArray.strings(values.value, true)}::text[], ${pgArray.numbers(values.clicks)}::bigint[])
          AS d(n, dimension, value, clicks)
        JOIN groups g ON g.n = d.n
      ), hourly AS (
        INSERT INTO click_hourly AS t (link_id, bucket, clicks, visitors)
        SELECT link_id, bucket, clicks, visitors FROM groups ORDER BY link_id, bucket
        ON CONFLICT (link_id, bucket) DO UPDATE
          SET clicks = t.clicks + excluded.clicks, visitors = hll_union(t.visitors, excluded.visitors)
      ), daily AS (
        INSERT INTO click_daily AS t (link_id, day, clicks, visitors)
        SELECT link_id, day, sum(clicks), hll_union_agg(visitors) FROM groups GROUP BY link_id, day ORDER BY link_id, day
        ON CONFLICT (link_id, day) DO UPDATE
          SET clicks = t.clicks + excluded.clicks, visitors = hll_union(t.visitors, excluded.visitors)
      ), hourly_dimensions AS (
        INSERT INTO click_hourly_dimensions AS t (link_id, bucket, dimension, value, clicks)
        SELECT link_id, bucket, dimension, value, clicks FROM dimension_rows ORDER BY link_id, dimension, bucket, value
        ON CONFLICT (link_id, dimension, bucket, value) DO UPDATE SET clicks = t.clicks + excluded.clicks
      ), daily_dimensions AS (
        INSERT INTO click_daily_dimensions AS t (link_id, dimension, day, value, clicks)
        SELECT link_id, dimension, day, value, sum(clicks) FROM dimension_rows
        GROUP BY link_id, dimension, day, value ORDER BY link_id, dimension, day, value
        ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET clicks = t.clicks + excluded.clicks
      )${previewRows}${eventRows}${installRows}
      SELECT batch_id AS "batchId" FROM claimed`;
  };

  /**
   * Adds batches to the rollups in one transaction, each together with its id; a batch whose id
   * was recorded before is skipped, and of batches sharing an id only the first counts. Returns the
   * ids recorded now.
   *
   * `rows` may carry the clicks of those first batches summed already (their `clicks` then need
   * not be given). If some ids were recorded before, such sums cannot be used: nothing is written
   * and BatchesRecordedBefore is thrown.
   */
  const recordBatches = async (batches: RollupBatch[], rows?: RollupRows): Promise<Set<string>> => {
    const unique = firstOfEachId(batches);
    const all =
      rows ?? unique.reduce((sum, batch) => sum.add(batch.clicks, batch.previews, batch.events, batch.installs), new RollupRows());
    try {
      return await write(unique, all, rows !== undefined);
    } catch (error) {
      // A month (or year) with no partition yet: the maintenance task creates them ahead, so this
      // is a click from far in the past or the future. The transaction rolled back whole.
      if (!isMissingPartition(error)) throw error;
      await rollupPartitions(sql).ensure(all.months());
      return write(unique, all, rows !== undefined);
    }
  };

  const write = (unique: RollupBatch[], all: RollupRows, summedByCaller: boolean): Promise<Set<string>> =>
    sql.begin(async (tx) => {
      const [, claimedIds] = await Promise.all([settings(tx, all.days()), claimAndAdd(tx, unique, all)]);
      const claimed = new Set(claimedIds);
      // Rarely, some ids were recorded before (a redelivered batch): their ids are claimed, the
      // rows were not added, and the batches claimed now are added on their own, from their clicks.
      if (claimed.size > 0 && claimed.size < unique.length) {
        // The caller's sums hold the repeated batches too, and its batches may carry no clicks:
        // roll the claims back rather than record ids without their clicks.
        if (summedByCaller) throw new BatchesRecordedBefore(unique.length - claimed.size);
        const fresh = unique.filter((batch) => claimed.has(batch.batchId));
        await claimAndAdd(
          tx,
          [],
          fresh.reduce((sum, batch) => sum.add(batch.clicks, batch.previews, batch.events, batch.installs), new RollupRows()),
        );
      }
      return claimed;
    });

  return {
    recordBatches,

    /**
     * Adds one batch to the rollups in one transaction, unless its id was recorded before.
     * Returns false for a batch already rolled up (a retry or a duplicate delivery).
     */
    async recordBatch(batch: RollupBatch): Promise<boolean> {
      return (await recordBatches([batch])).has(batch.batchId);
    },

    /**
     * Rolls every UTC day before `before`'s that has hourly combination rows and was not rolled
     * yet: sums its hourly combination rows into click_daily_combinations, once (migration 019).
     * Each day is its own transaction under the day's exclusive lock (COMBINATION_DAY_LOCK): it
     * waits for the batch transactions writing that day to commit, and the ones after it see the
     * day rolled and write its daily rows themselves. A day another process rolled meanwhile is
     * left alone. Returns the days rolled now (YYYY-MM-DD) and the daily rows written.
     */
    async rollCombinationDays(before: Date): Promise<{ days: string[]; rows: number }> {
      const pending = await sql<{ day: string }[]>`
        SELECT day::text AS day FROM click_combination_days
        WHERE NOT rolled AND day < ${before.toISOString().slice(0, 10)}::date ORDER BY day`;
      const rolled = { days: [] as string[], rows: 0 };
      for (const { day } of pending) {
        const rows = await sql.begin(async (tx) => {
          await tx`SELECT pg_advisory_xact_lock(${COMBINATION_DAY_LOCK}, ${Date.parse(day) / DAY_MS})`;
          const marked = await tx`UPDATE click_combination_days SET rolled = true WHERE day = ${day}::date AND NOT rolled`;
          if (marked.count === 0) return undefined;
          // The links are locked as the batch statement locks them, so a link deleted meanwhile
          // leaves no daily rows behind (its delete waits, then removes them).
          const written = await tx`
            WITH hours AS (
              SELECT * FROM click_hourly_combinations
              WHERE bucket >= ${day}::timestamp AT TIME ZONE 'UTC' AND bucket < (${day}::date + 1)::timestamp AT TIME ZONE 'UTC'
            ), live AS MATERIALIZED (
              SELECT id FROM links WHERE id IN (SELECT link_id FROM hours) ORDER BY id FOR KEY SHARE
            )
            INSERT INTO click_daily_combinations AS t (link_id, day, platform, device, country, browser, os, referrer, clicks, visitors)
            SELECT link_id, ${day}::date, platform, device, country, browser, os, referrer, sum(clicks), hll_union_agg(visitors)
            FROM hours WHERE link_id IN (SELECT id FROM live)
            GROUP BY link_id, platform, device, country, browser, os, referrer
            ORDER BY link_id, platform, device, country, browser, os, referrer
            ON CONFLICT (link_id, day, platform, device, country, browser, os, referrer) DO UPDATE
              SET clicks = t.clicks + excluded.clicks, visitors = hll_union(t.visitors, excluded.visitors)`;
          return written.count;
        });
        if (rows === undefined) continue;
        rolled.days.push(day);
        rolled.rows += rows;
      }
      return rolled;
    },

    /**
     * Forgets batch ids, and the ids of app events that came without a click, recorded before
     * `olderThan`; returns how many were removed.
     */
    async pruneProcessedBatches(olderThan: Date): Promise<number> {
      const batches = await sql`DELETE FROM processed_batches WHERE processed_at < ${olderThan}`;
      const events = await sql`DELETE FROM processed_app_events WHERE processed_at < ${olderThan}`;
      return batches.count + events.count;
    },

    /**
     * Deletes install clicks whose token expired before `now`, `chunk` rows per statement (each
     * its own short transaction, so neither a lock nor a scan grows with a backlog), at most
     * `maxChunks` of them; returns how many were deleted. A run that hits the limit leaves the
     * rest to the next one.
     */
    async pruneExpiredInstallClicks(now: Date, { chunk = 5_000, maxChunks = 200 } = {}): Promise<number> {
      let deleted = 0;
      for (let i = 0; i < maxChunks; i++) {
        const { count } = await sql`
          DELETE FROM install_clicks WHERE token_hash IN (
            SELECT token_hash FROM install_clicks WHERE expires_at < ${now} ORDER BY expires_at LIMIT ${chunk}
          )`;
        deleted += count;
        if (count < chunk) break;
      }
      return deleted;
    },
  };
}
export type RollupsRepository = ReturnType<typeof rollupsRepository>;
