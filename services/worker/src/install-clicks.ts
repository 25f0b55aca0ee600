import {
  type AppEvent,
  BoundedMap,
  type ClickEvent,
  type DeviceFacts,
  hashInstallToken,
  INSTALL_TOKEN_LENGTH,
  INSTALL_TOKEN_TTL_DAYS,
  networkOf,
  primaryLanguage,
  takesInstallToken,
  userAgentFacts,
} from '@deeplink/core';
import type { RollupInstallClick } from '@deeplink/core/db';

const DAY_MS = 86_400_000;
// What newInstallToken makes; anything else could never be handed back (findInstallToken reads only these).
const TOKEN = new RegExp(`^[A-Za-z0-9_-]{${INSTALL_TOKEN_LENGTH}}$`);
// "17.4": a version longer than this is not one a device reports.
const MAX_OS_VERSION_LENGTH = 16;
// Store visits repeat a small set of agents, as clicks do; longer agents are read every time.
const AGENT_CACHE_SIZE = 5_000;
const MAX_CACHED_AGENT_LENGTH = 512;

type AgentFacts = Pick<DeviceFacts, 'osVersion' | 'deviceFamily'>;

/** The agent's side of a match: the OS version (bounded) and the device family. */
function agentFactsOf(userAgent: string): AgentFacts {
  const { osVersion, deviceFamily } = userAgentFacts(userAgent);
  return { osVersion: osVersion?.slice(0, MAX_OS_VERSION_LENGTH), deviceFamily };
}

/**
 * Turns a store REDIRECT that handed out an install token into its install_clicks row: the token's
 * hash, the link, the platform, the visit's time and when the token expires, and the fingerprint
 * facts of its click (`click`, the batch's click the event names): the keyed hash of the address's
 * network, the OS version and device family of its agent, and the visitor's language. The address
 * and agent are read here and go no further. Undefined for an event that hands out no token: not
 * a REDIRECT, a platform without a store, or a token newInstallToken cannot have made.
 */
export function createInstallClickOf(visitorSalt: string) {
  const agents = new BoundedMap<string, AgentFacts>(AGENT_CACHE_SIZE);
  const agentFacts = (userAgent: string): AgentFacts =>
    userAgent.length > MAX_CACHED_AGENT_LENGTH ? agentFactsOf(userAgent) : agents.remember(userAgent, agentFactsOf);
  return (event: AppEvent, click: ClickEvent | undefined): RollupInstallClick | undefined => {
    const { install } = event;
    if (!install || event.name !== 'REDIRECT' || !takesInstallToken(event.platform)) return undefined;
    if (typeof install.token !== 'string' || !TOKEN.test(install.token)) return undefined;
    const row: RollupInstallClick = {
      tokenHash: hashInstallToken(install.token).toString('hex'),
      linkId: event.linkId.toLowerCase(),
      platform: event.platform,
      clickedAt: event.ts,
      expiresAt: event.ts + INSTALL_TOKEN_TTL_DAYS[event.platform] * DAY_MS,
    };
    const language = typeof install.language === 'string' ? primaryLanguage(install.language) : undefined;
    if (language) row.language = language;
    if (!click) return row;
    const network = typeof click.ip === 'string' ? networkOf(click.ip, visitorSalt) : undefined;
    if (network) row.network = network;
    const { osVersion, deviceFamily } = typeof click.userAgent === 'string' ? agentFacts(click.userAgent) : {};
    if (osVersion) row.osVersion = osVersion;
    if (deviceFamily) row.deviceFamily = deviceFamily;
    return row;
  };
}
export type InstallClickOf = ReturnType<typeof createInstallClickOf>;
