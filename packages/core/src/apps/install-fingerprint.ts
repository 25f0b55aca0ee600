import { createHmac } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * The facts a probabilistic install match compares (off by default, on per app): what the
 * redirector saw of a visit sent to a store, against what the freshly installed app reports. None
 * of them is the address itself: the network is an HMAC of the address's /24 (IPv4) or /64 (IPv6)
 * prefix, keyed with VISITOR_SALT, so a stored row cannot be turned back into a network.
 */
export interface DeviceFacts {
  /** HMAC of the client address's prefix, base64url; undefined when the address is not one. */
  network?: string;
  os?: 'ios' | 'android';
  /** "17.4": major and minor only, as far as the source says. */
  osVersion?: string;
  /** Phone or tablet: the one thing both a browser's User-Agent and an app can say the same way. */
  deviceFamily?: 'phone' | 'tablet';
  /** The primary language subtag, lower case: "fr" for fr-CA. */
  language?: string;
}

/** The /24 or /64 prefix of an address as text, or undefined for something that is not an address. */
export function addressPrefix(ip: string): string | undefined {
  const address = ip.startsWith('::ffff:') && isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
  if (isIPv4(address)) return `${address.split('.').slice(0, 3).join('.')}.0/24`;
  if (!isIPv6(address)) return undefined;
  const [head = '', tail = ''] = address.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = address.includes('::') ? 8 - headGroups.length - tailGroups.length : 0;
  const groups = [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group || '0', 16).toString(16))
    .join(':')}::/64`;
}

/** The keyed hash of an address's network (see DeviceFacts.network). */
export function networkOf(ip: string, secret: string): string | undefined {
  const prefix = addressPrefix(ip);
  return prefix && createHmac('sha256', secret).update(prefix).digest('base64url').slice(0, 22);
}

/** "17_4_1" or "14" as "17.4" or "14". */
const majorMinor = (version: string): string => version.replace(/_/g, '.').split('.').slice(0, 2).join('.');

const IOS_DEVICE = /\((iPhone|iPad|iPod)[^)]*? OS (\d+(?:_\d+)*)/;
/** Safari's own version, which on iOS is the system's: "Version/26.1". Other iOS browsers have none. */
const SAFARI_VERSION = / Version\/(\d+(?:\.\d+)*)/;
/** From iOS 26 on, Safari freezes the agent's OS at 18_6 or 18_7; its Version/ token still says 26. */
const FROZEN_IOS_MAJOR = 18;
const ANDROID_VERSION = /Android (\d+(?:\.\d+)*)/;
/** Chrome's reduced agent: "Android 10; K" on every device, whatever its version. */
const REDUCED_ANDROID = /Android 10; K[;)]/;

/** The iOS version an agent tells: Safari's Version/ when the OS token is frozen, else the OS token. */
function iosVersion(userAgent: string, osToken: string): string {
  const safari = SAFARI_VERSION.exec(userAgent)?.[1];
  if (safari && Number.parseInt(osToken, 10) === FROZEN_IOS_MAJOR && Number.parseInt(safari, 10) > FROZEN_IOS_MAJOR) {
    return majorMinor(safari);
  }
  return majorMinor(osToken);
}

/**
 * What a browser's User-Agent says of the device: the visit's side of a match. An OS version the
 * agent only pretends to know (Chrome's reduced Android agent) is left out rather than compared.
 */
export function userAgentFacts(userAgent: string): Omit<DeviceFacts, 'network' | 'language'> {
  const ios = IOS_DEVICE.exec(userAgent);
  if (ios) return { os: 'ios', osVersion: iosVersion(userAgent, ios[2]!), deviceFamily: ios[1] === 'iPad' ? 'tablet' : 'phone' };
  const android = ANDROID_VERSION.exec(userAgent);
  if (android) {
    // Android browsers put "Mobile" in the agent of a phone and leave it out on a tablet.
    const deviceFamily = / Mobile/.test(userAgent) ? 'phone' : 'tablet';
    if (REDUCED_ANDROID.test(userAgent)) return { os: 'android', deviceFamily };
    return { os: 'android', osVersion: majorMinor(android[1]!), deviceFamily };
  }
  return {};
}

/** The primary language of an Accept-Language header ("fr-CA,fr;q=0.9" → "fr"), or of a locale ("en_US" → "en"). */
export function primaryLanguage(value: string | undefined): string | undefined {
  const tag = /^\s*([A-Za-z]{2,3})(?:[-_,;\s]|$)/.exec(value ?? '');
  return tag?.[1]?.toLowerCase();
}
