import { describe, expect, it } from 'vitest';
import {
  acceptedLanguages,
  describeConditions,
  factsRead,
  firstMatchingRule,
  type TargetingCondition,
  type TargetingRule,
  type Visit,
} from '../src/routing/targeting.js';

const NOW = Date.UTC(2026, 10, 25, 12);

/** A visit with these facts, counting how often each is read. */
function visit(
  facts: Partial<{
    country: string;
    languages: string[];
    platform: 'android' | 'ios' | 'desktop';
    os: string;
    device: 'Mobile' | 'Desktop';
    query: Record<string, string>;
    now: number;
  }> = {},
) {
  const reads: Record<string, number> = {};
  const read =
    <T>(name: string, value: T) =>
    () => {
      reads[name] = (reads[name] ?? 0) + 1;
      return value;
    };
  const v: Visit = {
    country: read('country', facts.country ?? 'US'),
    languages: read('languages', facts.languages ?? ['en']),
    platform: read('platform', facts.platform ?? 'desktop'),
    os: read('os', facts.os ?? 'Windows'),
    device: read('device', facts.device ?? 'Desktop'),
    now: read('now', facts.now ?? NOW),
    query: (name) => facts.query?.[name],
  };
  return { v, reads };
}

describe('a condition on each fact', () => {
  const cases: [string, TargetingCondition, Parameters<typeof visit>[0], boolean][] = [
    ['country in the list', { field: 'country', in: ['DE', 'AT'] }, { country: 'AT' }, true],
    ['country outside the list', { field: 'country', in: ['DE', 'AT'] }, { country: 'CH' }, false],
    ['first language in the list', { field: 'language', in: ['de'] }, { languages: ['de', 'en'] }, true],
    ['a later language does not count', { field: 'language', in: ['de'] }, { languages: ['en', 'de'] }, false],
    ['no language at all', { field: 'language', in: ['de'] }, { languages: [] }, false],
    ['platform', { field: 'platform', in: ['ios', 'android'] }, { platform: 'android' }, true],
    ['other platform', { field: 'platform', in: ['ios'] }, { platform: 'desktop' }, false],
    ['operating system', { field: 'os', in: ['macOS'] }, { os: 'macOS' }, true],
    ['other operating system', { field: 'os', in: ['macOS'] }, { os: 'Linux' }, false],
    ['device', { field: 'device', in: ['Mobile'] }, { device: 'Mobile' }, true],
    ['other device', { field: 'device', in: ['Mobile'] }, { device: 'Desktop' }, false],
    ['inside a window', { field: 'time', from: '2026-11-25T00:00:00Z', until: '2026-11-26T00:00:00Z' }, {}, true],
    ['at its start (included)', { field: 'time', from: '2026-11-25T12:00:00Z' }, {}, true],
    ['at its end (excluded)', { field: 'time', until: '2026-11-25T12:00:00Z' }, {}, false],
    ['before a window', { field: 'time', from: '2026-12-01T00:00:00Z' }, {}, false],
    ['query parameter with a listed value', { field: 'query', name: 'ref', in: ['tv', 'radio'] }, { query: { ref: 'tv' } }, true],
    ['query parameter with another value', { field: 'query', name: 'ref', in: ['tv'] }, { query: { ref: 'web' } }, false],
    ['query parameter missing', { field: 'query', name: 'ref', in: ['tv'] }, {}, false],
  ];
  it.each(cases)('%s', (_name, condition, facts, holds) => {
    const rules: TargetingRule<string>[] = [{ conditions: [condition], destination: 'matched' }];
    expect(firstMatchingRule(rules, visit(facts).v)?.rule.destination).toBe(holds ? 'matched' : undefined);
  });
});

describe('rules in order', () => {
  const rules: TargetingRule<string>[] = [
    {
      conditions: [
        { field: 'country', in: ['DE'] },
        { field: 'platform', in: ['ios'] },
      ],
      destination: 'german iPhones',
    },
    { conditions: [{ field: 'country', in: ['DE'] }], destination: 'germany' },
    { conditions: [{ field: 'language', in: ['fr'] }], destination: 'french speakers' },
  ];

  it('takes the first rule whose conditions all hold (AND), and none when none does', () => {
    expect(firstMatchingRule(rules, visit({ country: 'DE', platform: 'ios' }).v)).toMatchObject({
      index: 0,
      rule: { destination: 'german iPhones' },
    });
    expect(firstMatchingRule(rules, visit({ country: 'DE', platform: 'android', languages: ['fr'] }).v)?.index).toBe(1);
    expect(firstMatchingRule(rules, visit({ country: 'BE', languages: ['fr', 'nl'] }).v)?.index).toBe(2);
    expect(firstMatchingRule(rules, visit({ country: 'US' }).v)).toBeUndefined();
    expect(firstMatchingRule([], visit().v)).toBeUndefined();
  });

  it('treats a rule without conditions as matching every visitor', () => {
    expect(firstMatchingRule([...rules, { conditions: [], destination: 'everyone' }], visit({ country: 'US' }).v)?.index).toBe(3);
  });

  it('reads each fact at most once, and only those a rule before the match asks for', () => {
    const { v, reads } = visit({ country: 'FR', languages: ['fr'] });
    expect(firstMatchingRule(rules, v)?.index).toBe(2);
    expect(reads).toEqual({ country: 1, languages: 1 });
    expect(factsRead(rules)).toEqual(new Set(['country', 'platform', 'language']));
  });
});

describe('Accept-Language', () => {
  it.each([
    [undefined, []],
    ['', []],
    ['de-DE,de;q=0.9,en;q=0.8', ['de', 'en']],
    ['en;q=0.5, fr', ['fr', 'en']],
    ['fr;q=0, es', ['es']],
    ['*, it;q=0.4', ['it']],
    ['PT-br', ['pt']],
    ['zh-Hant-TW;q=0.7,ja;q=0.7', ['zh', 'ja']],
  ])('%s → %j', (header, languages) => {
    expect(acceptedLanguages(header)).toEqual(languages);
  });

  it('reads at most 16 entries of a huge header', () => {
    const header = Array.from({ length: 10_000 }, (_, i) => `x${String.fromCharCode(97 + (i % 26))}`).join(',');
    expect(acceptedLanguages(header)).toHaveLength(16);
  });
});

describe('in plain words', () => {
  it('says what each rule asks', () => {
    expect(
      describeConditions([
        { field: 'country', in: ['DE', 'AT'] },
        { field: 'language', in: ['de'] },
        { field: 'time', from: '2026-12-01T00:00:00Z' },
        { field: 'query', name: 'ref', in: ['tv'] },
      ]),
    ).toBe('country is DE or AT, and first language is de, and from 2026-12-01T00:00:00Z, and query parameter ref is tv');
    expect(describeConditions([])).toBe('every visitor');
  });
});
