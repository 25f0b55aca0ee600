import { isbot } from 'isbot';
import { UAParser } from 'ua-parser-js';
import { BoundedMap, detectPlatform, type Platform } from '@deeplink/core';

/** Everything the rollups need from a User-Agent string. */
export interface UserAgentInfo {
  bot: boolean;
  platform: Platform;
  browser: string;
  os: string;
  /** The spec's two device labels. */
  device: 'Mobile' | 'Desktop';
}

const UNKNOWN = 'Unknown';
const MOBILE_TYPES = new Set(['mobile', 'tablet', 'wearable']);
const CACHE_SIZE = 20_000;
// Longer agents are parsed without being cached, so a flood of huge made-up ones cannot fill memory.
const MAX_CACHED_LENGTH = 512;

/**
 * Parses User-Agent strings, remembering at least the last CACHE_SIZE / 2 distinct ones: a full parse costs tens
 * of microseconds, while real traffic repeats a small set of agents.
 */
export function createUserAgentParser(cacheSize = CACHE_SIZE): (userAgent: string) => UserAgentInfo {
  const parser = new UAParser();
  const parse = (userAgent: string): UserAgentInfo => {
    const { browser, os, device } = parser.setUA(userAgent).getResult();
    return {
      bot: isbot(userAgent),
      platform: detectPlatform(userAgent),
      browser: browser.name || UNKNOWN,
      os: os.name || UNKNOWN,
      device: device.type && MOBILE_TYPES.has(device.type) ? 'Mobile' : 'Desktop',
    };
  };
  const cache = new BoundedMap<string, UserAgentInfo>(cacheSize);
  return (userAgent) => (userAgent.length > MAX_CACHED_LENGTH ? parse(userAgent) : cache.remember(userAgent, parse));
}
