import type { SeededLink } from './seed.js';
import { AGENT_MIX, pickAgent, seededRandom } from './user-agents.js';
import type { WrkRequest } from './wrk.js';

/**
 * The request rotation wrk cycles through: every link `perLink` times, each time with an agent
 * drawn from the weighted mix (bots included), in a fixed pseudo-random order, or always `userAgent`.
 */
export function wrkRequests(
  links: readonly Pick<SeededLink, 'code'>[],
  {
    perLink = 4,
    seed = 1,
    headers,
    userAgent,
  }: { perLink?: number; seed?: number; headers?: Record<string, string>; userAgent?: string } = {},
): WrkRequest[] {
  const random = seededRandom(seed);
  const requests: WrkRequest[] = [];
  for (let round = 0; round < perLink; round++) {
    for (const link of links)
      requests.push({
        path: `/${link.code}`,
        userAgent: userAgent ?? pickAgent(AGENT_MIX, random()).userAgent,
        ...(headers && { headers }),
      });
  }
  return requests;
}
