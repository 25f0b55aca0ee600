/**
 * The link-preview crawlers: the agents social networks and chat apps send to draw a card for a
 * shared link. The one list both the redirector (which shows them the preview page) and the worker
 * (which counts their visits as previews, never as clicks) read. Each entry is a token of the
 * User-Agent, matched case-insensitively; add new ones here. Apps whose in-app browser names
 * itself in the User-Agent (Snapchat, Line, Viber…) are people, not crawlers, and are left out.
 * iMessage previews come as facebookexternalhit and Twitterbot together.
 */
export const PREVIEW_CRAWLERS = [
  { name: 'Facebook', token: 'facebookexternalhit', example: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)' },
  { name: 'Facebook catalog', token: 'facebookcatalog', example: 'facebookcatalog/1.0' },
  {
    name: 'Meta',
    token: 'meta-externalagent',
    example: 'meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)',
  },
  { name: 'X (Twitter)', token: 'Twitterbot', example: 'Twitterbot/1.0' },
  { name: 'Slack', token: 'Slackbot', example: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
  {
    name: 'LinkedIn',
    token: 'LinkedInBot',
    example: 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  },
  { name: 'WhatsApp', token: 'WhatsApp', example: 'WhatsApp/2.23.20.0 A' },
  { name: 'Telegram', token: 'TelegramBot', example: 'TelegramBot (like TwitterBot)' },
  { name: 'Discord', token: 'Discordbot', example: 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)' },
  { name: 'Pinterest', token: 'Pinterestbot', example: 'Mozilla/5.0 (compatible; Pinterestbot/1.0; +http://www.pinterest.com/bot.html)' },
  { name: 'Skype / Teams', token: 'SkypeUriPreview', example: 'Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5' },
  {
    name: 'Microsoft Teams',
    token: 'MicrosoftPreview',
    example:
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/96.0.4664.110 Safari/537.36 MicrosoftPreview/2.0 +https://aka.ms/MicrosoftPreview',
  },
  { name: 'Mastodon', token: 'Mastodon', example: 'http.rb/5.1.1 (Mastodon/4.2.0; +https://mastodon.social/)' },
  { name: 'Bluesky', token: 'Bluesky Cardyb', example: 'Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)' },
  {
    name: 'Google Chat',
    token: 'Google-PageRenderer',
    example:
      'Mozilla/5.0 (Windows NT 6.1; rv:6.0) Gecko/20110814 Firefox/6.0 Google-PageRenderer Google (+https://developers.google.com/+/web/snippet/)',
  },
  { name: 'Embedly', token: 'Embedly', example: 'Mozilla/5.0 (compatible; Embedly/0.2; +http://support.embed.ly/)' },
  { name: 'Redditbot', token: 'redditbot', example: 'Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)' },
  { name: 'Iframely', token: 'Iframely', example: 'Iframely/1.3.1 (+https://iframely.com/docs/about)' },
] as const;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** One case-insensitive scan of a User-Agent for every token at once. */
const CRAWLER = new RegExp(PREVIEW_CRAWLERS.map(({ token }) => escapeRegExp(token)).join('|'), 'i');

/** True for a link-preview crawler's User-Agent. */
export const isPreviewCrawler = (userAgent: string): boolean => CRAWLER.test(userAgent);
