import { invalidRequest } from '@deeplink/core';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone (building one costs far more than using it). */
function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** Milliseconds to add to a UTC instant to get the wall-clock time of `zone` (Paris in summer: +2 hours). */
export function offsetAt(ms: number, zone: string): number {
  const parts: Record<string, string> = {};
  for (const { type, value } of formatterOf(zone).formatToParts(ms)) parts[type] = value;
  const year = parts.era === 'BC' ? 1 - Number(parts.year) : Number(parts.year);
  const wall = new Date(0).setUTCFullYear(year, Number(parts.month) - 1, Number(parts.day));
  const local = wall + ((Number(parts.hour) * 60 + Number(parts.minute)) * 60 + Number(parts.second)) * 1000;
  return local - Math.floor(ms / 1000) * 1000;
}

/**
 * A time zone's clock: UTC instants to wall-clock times (as epoch ms of the same UTC wall clock)
 * and back. UTC itself converts nothing, so the default keeps its old, exact arithmetic.
 */
export interface ZoneClock {
  zone: string;
  toLocal(ms: number): number;
  /**
   * The first instant whose wall-clock time is `local` or later: `local` itself when it exists
   * once, the earlier one when it exists twice (clocks going back), the end of the gap when it
   * does not exist (clocks going forward across it), as PostgreSQL resolves them too.
   */
  fromLocal(local: number): number;
}

const UTC_CLOCK: ZoneClock = { zone: 'UTC', toLocal: (ms) => ms, fromLocal: (local) => local };

function zoneClock(zone: string): ZoneClock {
  const toLocal = (ms: number) => ms + offsetAt(ms, zone);
  return {
    zone,
    toLocal,
    fromLocal(local) {
      // The offsets a day either side cover both sides of any transition near `local`.
      const candidates = [...new Set([offsetAt(local - DAY, zone), offsetAt(local + DAY, zone), offsetAt(local, zone)])]
        .map((offset) => local - offset)
        .filter((instant) => toLocal(instant) === local)
        .sort((a, b) => a - b);
      if (candidates.length > 0) return candidates[0]!;
      // In a gap: the offset before the transition lands on its end.
      return local - Math.min(offsetAt(local - DAY, zone), offsetAt(local + DAY, zone));
    },
  };
}

/** UTC under any of its names (`utc`, `Etc/UTC`, `GMT`…): the runtime resolves them all to `UTC`. */
const isUtc = (zone: string) =>
  new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone.replace(/^(Etc\/)?(UTC|GMT)$/, 'UTC') === 'UTC';

/**
 * The clock of a zone named in a query (already checked to exist), under the name it was given:
 * ICU's canonical names are sometimes the older ones (Asia/Kolkata becomes Asia/Calcutta).
 */
export function clockOf(zone: string): ZoneClock {
  return isUtc(zone) ? UTC_CLOCK : zoneClock(zone);
}

const formatOffset = (offset: number) => {
  const minutes = Math.abs(offset) / 60_000;
  const pad = (n: number) => String(Math.floor(n)).padStart(2, '0');
  return `UTC${offset < 0 ? '-' : '+'}${pad(minutes / 60)}:${pad(minutes % 60)}`;
};

/**
 * Clicks are stored per UTC hour, so a bucket can only start on a whole UTC hour: 400 when
 * `instant` (a bucket or range boundary) is not one, naming the zone and its offset then.
 */
export function assertWholeHour(instant: number, clock: ZoneClock): void {
  if (instant % HOUR === 0) return;
  const offset = offsetAt(instant, clock.zone);
  throw invalidRequest(`Time zone ${clock.zone} is ${formatOffset(offset)}: only zones a whole number of hours from UTC can be reported`, [
    {
      field: 'timezone',
      message:
        `${clock.zone} is ${formatOffset(offset)} on ${new Date(instant).toISOString().slice(0, 10)}; clicks are counted per UTC hour, ` +
        'so buckets can only start on a whole UTC hour (zones such as Asia/Kolkata or Asia/Kathmandu are not supported)',
    },
  ]);
}
