/** The platform a visit is routed for. */
export type Platform = 'android' | 'ios' | 'desktop';

// iPhone/iPad/iPod, plus iPadOS web views that present a Macintosh agent but keep the
// "Mobile/<build>" token (desktop Safari on a Mac never sends it).
const IOS = /iPhone|iPad|iPod|Macintosh.*Mobile\//;
const ANDROID = /Android/;

/** Picks the routing platform from a User-Agent header; one or two regex scans, no parsing. */
export function detectPlatform(userAgent: string): Platform {
  if (ANDROID.test(userAgent)) return 'android';
  if (IOS.test(userAgent)) return 'ios';
  return 'desktop';
}

/** The iPad among iOS agents: its own name, or an iPadOS web view's Mac agent with Mobile/ (iPhones never send that). */
const IPAD = /iPad|Macintosh.*Mobile\//;

/** Whether an agent detectPlatform calls `ios` is an iPad's; asked only of links that route iPads apart. */
export const isIpad = (userAgent: string): boolean => IPAD.test(userAgent);
