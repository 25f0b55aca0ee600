import { AGENTS } from '../k6/lib/traffic.js';

/** One User-Agent of the traffic mix; `weight` is its share of visits, `bot` whether analytics must drop it. */
export interface AgentShare {
  userAgent: string;
  weight: number;
  bot: boolean;
}

/**
 * A campaign's visits: mostly phones, a third desktop, and link-preview and search bots that the
 * worker must leave out of the counts. The k6 scripts' mix (k6/lib/traffic.js), so both tools
 * send the same traffic.
 */
export const AGENT_MIX: readonly AgentShare[] = AGENTS;

/** The human agents only, for traffic that must all be counted. */
export const HUMAN_AGENTS: readonly AgentShare[] = AGENT_MIX.filter((agent) => !agent.bot);

/**
 * A deterministic pseudo-random generator (mulberry32), so every run sends the same sequence of
 * links and agents and two runs are comparable.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks one of `items` by weight with a random number in [0, 1). */
export function pickWeighted<T extends { weight: number }>(items: readonly T[], random: number): T {
  const total = items.reduce((sum, item) => sum + item.weight, 0);
  let remaining = random * total;
  for (const item of items) {
    remaining -= item.weight;
    if (remaining < 0) return item;
  }
  return items[items.length - 1]!;
}

/** Picks an agent by weight from `mix` with a random number in [0, 1). */
export const pickAgent = (mix: readonly AgentShare[], random: number): AgentShare => pickWeighted(mix, random);
