/**
 * Where a platform's install facts come from, for deferred deep links (a link tapped before the
 * app was installed, resolved at its first launch by install()). Each is implemented by the app
 * with its platform's module (react-native-play-install-referrer, Capacitor's Clipboard, …), and
 * read only when install() is called without that fact. A reader that throws counts as having
 * nothing: the install is still sent with what the others had.
 */
export interface PlatformReaders {
  /** Android: the Play Install Referrer string of this install. */
  installReferrer?: InstallReferrerReader;
  /** iOS: a short URL the web page copied before sending the visitor to the App Store. */
  pasteboard?: PasteboardReader;
  /** Facts about the device: the probabilistic match compares OS version, phone or tablet, and language. */
  device?: DeviceFactsReader;
}

export interface InstallReferrerReader {
  /** The referrer string, or undefined when the store gave none. */
  readInstallReferrer(): Promise<string | undefined>;
}

export interface PasteboardReader {
  /** The pasteboard's URL, or undefined. iOS shows the user a paste notice when it is read. */
  readPasteboardUrl(): Promise<string | undefined>;
}

export interface DeviceFacts {
  platform: 'ios' | 'android' | 'web';
  /** The operating system's version, e.g. `17.4`. */
  osVersion?: string;
  /** Phone or tablet (an iPad, an Android tablet). */
  deviceFamily?: 'phone' | 'tablet';
  /** The app's own version, e.g. `2.4.1`. */
  appVersion?: string;
  /** BCP 47 language tag, e.g. `en-GB`. */
  locale?: string;
  /** IANA time zone, e.g. `Europe/Paris`. */
  timeZone?: string;
  /** Screen size in device-independent pixels. */
  screen?: { width: number; height: number };
}

export interface DeviceFactsReader {
  readDeviceFacts(): Promise<DeviceFacts>;
}
