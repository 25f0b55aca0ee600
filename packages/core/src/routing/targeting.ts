import type { Platform } from './platform.js';

/**
 * Targeting rules: an ordered list on a link, the first rule whose conditions all hold decides
 * where the visitor goes. Each condition reads one fact of the visit; facts that cost something to
 * learn (the country needs a GeoIP lookup, the OS and device a User-Agent parse) are read only when
 * a rule asks for them, through a Visit whose getters compute on first use.
 */
export type TargetingCondition =
  | { field: 'country'; in: string[] }
  | { field: 'language'; in: string[] }
  | { field: 'platform'; in: Platform[] }
  | { field: 'os'; in: string[] }
  | { field: 'device'; in: ('Mobile' | 'Desktop')[] }
  | { field: 'time'; from?: string; until?: string }
  | { field: 'query'; name: string; in: string[] };

export interface TargetingRule<Destination> {
  conditions: TargetingCondition[];
  destination: Destination;
}

/** What the rules may ask of a visit; each getter is called at most once, and only if a rule needs it. */
export interface Visit {
  country(): string;
  /** The visitor's languages from Accept-Language, most preferred first, as lower-case primary subtags ("de", "fr"). */
  languages(): string[];
  platform(): Platform;
  os(): string;
  device(): 'Mobile' | 'Desktop';
  /** The value of a query parameter of the request, or undefined. */
  query(name: string): string | undefined;
  /** Epoch milliseconds. */
  now(): number;
}

/** A Visit's facts read once each, whatever the number of rules and conditions that ask. */
export function memoizedVisit(visit: Visit): Visit {
  const known = new Map<keyof Visit, unknown>();
  const once =
    <K extends Exclude<keyof Visit, 'query'>>(key: K) =>
    (): ReturnType<Visit[K]> => {
      if (!known.has(key)) known.set(key, visit[key]());
      return known.get(key) as ReturnType<Visit[K]>;
    };
  return {
    country: once('country'),
    languages: once('languages'),
    platform: once('platform'),
    os: once('os'),
    device: once('device'),
    now: once('now'),
    query: (name) => visit.query(name),
  };
}

/** Whether one condition holds for the visit. */
export function conditionHolds(condition: TargetingCondition, visit: Visit): boolean {
  switch (condition.field) {
    case 'country':
      return condition.in.includes(visit.country());
    case 'language': {
      // The visitor's first language decides: a German browser that also accepts English is German.
      const first = visit.languages()[0];
      return first !== undefined && condition.in.includes(first);
    }
    case 'platform':
      return condition.in.includes(visit.platform());
    case 'os':
      return condition.in.includes(visit.os());
    case 'device':
      return condition.in.includes(visit.device());
    case 'time': {
      const now = visit.now();
      return (
        (condition.from === undefined || Date.parse(condition.from) <= now) &&
        (condition.until === undefined || now < Date.parse(condition.until))
      );
    }
    case 'query': {
      const value = visit.query(condition.name);
      return value !== undefined && condition.in.includes(value);
    }
  }
}

/** The first rule whose conditions all hold (a rule without conditions always does), or undefined. */
export function firstMatchingRule<Destination>(
  rules: readonly TargetingRule<Destination>[],
  visit: Visit,
): { index: number; rule: TargetingRule<Destination> } | undefined {
  const facts = memoizedVisit(visit);
  for (const [index, rule] of rules.entries()) {
    if (rule.conditions.every((condition) => conditionHolds(condition, facts))) return { index, rule };
  }
  return undefined;
}

/** The facts a set of rules reads, so the redirector learns only those (no GeoIP lookup without a country rule). */
export function factsRead(rules: readonly TargetingRule<unknown>[]): ReadonlySet<TargetingCondition['field']> {
  return new Set(rules.flatMap((rule) => rule.conditions.map((condition) => condition.field)));
}

/**
 * The languages of an Accept-Language header, most preferred first: primary subtags in lower
 * case, those with q=0 left out, ties kept in the header's order. At most the first 16 entries are
 * read, so a huge header costs nothing more.
 */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  const entries: { language: string; q: number; at: number }[] = [];
  for (const [at, part] of header.split(',', 16).entries()) {
    const [tag = '', ...params] = part.trim().split(';');
    const language = tag.trim().split('-', 1)[0]!.toLowerCase();
    if (!/^[a-z]{2,8}$/.test(language)) continue;
    const qParam = params.map((param) => param.trim()).find((param) => param.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!(q > 0)) continue;
    entries.push({ language, q, at });
  }
  entries.sort((a, b) => b.q - a.q || a.at - b.at);
  return [...new Set(entries.map((entry) => entry.language))];
}

/** One condition in plain words. */
function phrase(condition: TargetingCondition): string {
  const either = (values: readonly string[]) => values.join(' or ');
  switch (condition.field) {
    case 'country':
      return `country is ${either(condition.in)}`;
    case 'language':
      return `first language is ${either(condition.in)}`;
    case 'platform':
      return `platform is ${either(condition.in)}`;
    case 'os':
      return `operating system is ${either(condition.in)}`;
    case 'device':
      return `device is ${either(condition.in.map((device) => device.toLowerCase()))}`;
    case 'time':
      return [condition.from && `from ${condition.from}`, condition.until && `until ${condition.until}`].filter(Boolean).join(' ');
    case 'query':
      return `query parameter ${condition.name} is ${either(condition.in)}`;
  }
}

/** A rule's conditions in plain words, for the link page: "country is DE or AT, and first language is de". */
export function describeConditions(conditions: readonly TargetingCondition[]): string {
  return conditions.length === 0 ? 'every visitor' : conditions.map(phrase).join(', and ');
}
