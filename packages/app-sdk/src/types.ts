/**
 * What POST /api/app/open answers, as the app reads it. Written out by hand (the SDK has no
 * runtime dependency); test/types.test.ts checks it against the API's own schema types.
 */
export interface AppOpenResult {
  /** The link the app was opened through. */
  link: {
    id: string;
    /** The short code, the URL's path. */
    code: string;
    /** The link's short URL, on its own domain. */
    url: string;
  };
  /**
   * The link's app URL for this app's platform (its iosLink or androidLink), when that targets
   * this app (same bundle id or package name). Route to it inside the app; absent otherwise.
   */
  deepLink?: string;
  /** The app version the link asks for, when it sets one: an older app can ask for an update. */
  minimumVersion?: string;
  /** The link's custom parameters (often `utm_*`); `{}` when it has none. */
  parameters: Record<string, string>;
  /** The link's default URL with its parameters appended, as a browser would be sent. */
  webUrl: string;
}

/** Device facts for the probabilistic install match, as POST /api/app/install takes them. */
export interface InstallDevice {
  /** The OS version, e.g. `17.4.1`; compared by major and minor. */
  osVersion: string;
  deviceFamily: 'phone' | 'tablet';
  /** The device's language or locale (`fr-CA`, `en_US`); compared by its primary language. */
  language: string;
  /** IANA time zone; sent, not compared (the visit side does not know it). */
  timeZone?: string;
  /** Screen size in points; sent, not compared. */
  screen?: { width: number; height: number };
}

/** An install matched to the link that brought it: what open() answers for that link, and how it was matched. */
export interface AppInstallMatch extends AppOpenResult {
  /**
   * `install-referrer` (Android's Play referrer held the visit's token), `pasteboard` (the iOS
   * pasteboard URL did) or `fingerprint` (the probabilistic match, when the app's owner turned it on).
   */
  matchedBy: 'install-referrer' | 'pasteboard' | 'fingerprint';
  /** The fingerprint match's score (0..1); absent for a token match. */
  confidence?: number;
}

/** What POST /api/app/install answers: the match, or null (no link brought this install, as far as anyone can tell). */
export interface AppInstallResult {
  match: AppInstallMatch | null;
}

/** One problem with a request field, as the API's 400 envelope lists them. */
export interface ErrorDetail {
  /** The field's path (`url`, `openId`), or "" for the body as a whole. */
  field: string;
  message: string;
}
