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

/** One problem with a request field, as the API's 400 envelope lists them. */
export interface ErrorDetail {
  /** The field's path (`url`, `openId`), or "" for the body as a whole. */
  field: string;
  message: string;
}
