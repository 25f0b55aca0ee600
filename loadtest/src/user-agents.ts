/** One User-Agent of the traffic mix; `weight` is its share of visits, `bot` whether analytics must drop it. */
export interface AgentShare {
  userAgent: string;
  weight: number;
  bot: boolean;
}

/**
 * A campaign's visits: mostly phones, a third desktop, and link-preview and search bots that the
 * worker must leave out of the counts. The same mix as k6/lib/agents.js.
 */
export const AGENT_MIX: readonly AgentShare[] = [
  { weight: 18, bot: false, userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36' },
  { weight: 12, bot: false, userAgent: 'Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36' },
  { weight: 15, bot: false, userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1' },
  { weight: 8, bot: false, userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 330.0.0.0 (iPhone15,3; iOS 17_4)' },
  { weight: 20, bot: false, userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36' },
  { weight: 9, bot: false, userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15' },
  { weight: 6, bot: false, userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' },
  { weight: 4, bot: true, userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' },
  { weight: 3, bot: true, userAgent: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)' },
  { weight: 2, bot: true, userAgent: 'Twitterbot/1.0' },
  { weight: 2, bot: true, userAgent: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
  { weight: 1, bot: true, userAgent: 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)' },
];

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

/** Picks an agent by weight from `mix` with a random number in [0, 1). */
export function pickAgent(mix: readonly AgentShare[], random: number): AgentShare {
  const total = mix.reduce((sum, agent) => sum + agent.weight, 0);
  let remaining = random * total;
  for (const agent of mix) {
    remaining -= agent.weight;
    if (remaining < 0) return agent;
  }
  return mix[mix.length - 1]!;
}
