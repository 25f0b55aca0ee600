// The traffic model the k6 scripts share, free of k6 imports so Node tests can check it against
// the real redirector: the agent mix, the shapes of the seeded links, and what the redirector must
// answer for each shape and platform (docs/redirect.md).

/** @typedef {'android' | 'ios' | 'desktop'} Platform */
/** @typedef {{ userAgent: string, weight: number, bot: boolean, platform: Platform }} Agent */
/** @typedef {{ id: string, url: string, shape: number, index: number }} SeededLink */
/**
 * A create-link request body (the fields the scripts use).
 * @typedef {{
 *   title: string, defaultUrl: string, desktopUrl?: string, customParameters?: Record<string, string>,
 *   androidLink?: { url: string, appPackageName: string, minimumVersion?: string, fallbackUrl?: string },
 *   iosLink?: { url: string, bundleId: string, minimumVersion?: string, fallbackUrl?: string },
 * }} LinkBody
 */

/** Phones, desktops and link-preview bots, weighted like a campaign's traffic (same mix as the bench). @type {Agent[]} */
export const AGENTS = [
  {
    weight: 18,
    bot: false,
    platform: 'android',
    userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  },
  {
    weight: 12,
    bot: false,
    platform: 'android',
    userAgent:
      'Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
  },
  {
    weight: 15,
    bot: false,
    platform: 'ios',
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  },
  {
    weight: 8,
    bot: false,
    platform: 'ios',
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 330.0.0.0 (iPhone15,3; iOS 17_4)',
  },
  {
    weight: 20,
    bot: false,
    platform: 'desktop',
    userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  },
  {
    weight: 9,
    bot: false,
    platform: 'desktop',
    userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  },
  { weight: 6, bot: false, platform: 'desktop', userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' },
  { weight: 4, bot: true, platform: 'desktop', userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' },
  { weight: 3, bot: true, platform: 'desktop', userAgent: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)' },
  { weight: 2, bot: true, platform: 'desktop', userAgent: 'Twitterbot/1.0' },
  { weight: 2, bot: true, platform: 'desktop', userAgent: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
  { weight: 1, bot: true, platform: 'desktop', userAgent: 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)' },
];

/**
 * The body of the index-th link: four shapes in turn, so every routing branch is exercised.
 * 0: every platform and tracking parameters; 1: Android only; 2: desktop; 3: default URL only.
 * @param {number} index
 * @param {string} title
 * @returns {LinkBody}
 */
export function linkBody(index, title) {
  const defaultUrl = `https://shop.example.com/products/${index}`;
  const desktopUrl = `https://www.example.com/products/${index}`;
  switch (index % 4) {
    case 0:
      return {
        title,
        defaultUrl,
        desktopUrl,
        androidLink: { url: `shop://products/${index}`, appPackageName: 'com.example.shop', minimumVersion: '3.2.0' },
        iosLink: { url: `shop://products/${index}`, bundleId: 'com.example.shop', fallbackUrl: 'https://apps.apple.com/app/id123456789' },
        customParameters: { utm_source: 'loadtest', utm_campaign: 'spring' },
      };
    case 1:
      return { title, defaultUrl, androidLink: { url: `shop://products/${index}`, appPackageName: 'com.example.shop' } };
    case 2:
      return { title, defaultUrl, desktopUrl };
    default:
      return { title, defaultUrl, customParameters: { utm_medium: 'social' } };
  }
}

/**
 * What the redirector must answer for a link of this shape and a visitor on this platform:
 * the status, and the start of the Location header for a 302.
 * @param {SeededLink} link
 * @param {Platform} platform
 * @returns {{ status: number, location?: string }}
 */
export function expectedAnswer(link, platform) {
  const { shape, index } = link;
  if (platform === 'android' && (shape === 0 || shape === 1)) return { status: 302, location: 'intent://' };
  if (platform === 'ios' && shape === 0) return { status: 200 };
  if (platform === 'desktop' && (shape === 0 || shape === 2)) return { status: 302, location: `https://www.example.com/products/${index}` };
  return { status: 302, location: `https://shop.example.com/products/${index}` };
}

/**
 * The path of an absolute URL (k6 has no URL class in every version, so by pattern).
 * @param {string} url
 * @returns {string}
 */
export function pathOf(url) {
  return url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]+/i, '') || '/';
}
