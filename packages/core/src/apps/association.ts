/**
 * The files that let an app open this service's short links itself: Apple's
 * apple-app-site-association (Universal Links) and Google's assetlinks.json (Android App Links).
 * Built once from the apps a domain serves; the redirector answers them from memory.
 */

export interface IosApp {
  platform: 'ios';
  /** Apple Developer team id, ten characters. */
  teamId: string;
  bundleId: string;
}

export interface AndroidApp {
  platform: 'android';
  packageName: string;
  /** SHA-256 fingerprints of the app's signing certificates, `AA:BB:…` (32 bytes). */
  sha256CertFingerprints: string[];
}

export type AssociatedApp = IosApp | AndroidApp;

export const TEAM_ID = /^[A-Z0-9]{10}$/;
export const BUNDLE_ID = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;
export const PACKAGE_NAME = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;
export const SHA256_FINGERPRINT = /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/;

/** Paths the redirector answers itself: never handed to an app. */
const SERVICE_PATHS = ['/healthz', '/readyz', '/.well-known/*'];

/** Apple's format (iOS 13+): one detail per app, every short-link path but the service's own. */
export function appleAppSiteAssociation(apps: readonly AssociatedApp[]): string {
  const details = apps
    .filter((app): app is IosApp => app.platform === 'ios')
    .map((app) => ({
      appIDs: [`${app.teamId}.${app.bundleId}`],
      components: [...SERVICE_PATHS.map((path) => ({ '/': path, exclude: true })), { '/': '/*', comment: 'every short link' }],
    }));
  return JSON.stringify({ applinks: { details } });
}

/** Google's Digital Asset Links statement list: each Android app may handle every URL of the domain. */
export function assetLinks(apps: readonly AssociatedApp[]): string {
  const statements = apps
    .filter((app): app is AndroidApp => app.platform === 'android')
    .map((app) => ({
      relation: ['delegate_permission/common.handle_all_urls'],
      target: { namespace: 'android_app', package_name: app.packageName, sha256_cert_fingerprints: app.sha256CertFingerprints },
    }));
  return JSON.stringify(statements);
}

/**
 * DEFAULT_DOMAIN_APPS: comma-separated `ios:TEAMID.bundle.id` (Apple's app id) and
 * `android:package.name@FINGERPRINT[;FINGERPRINT…]`. Undefined when an entry is malformed.
 */
export function parseDefaultDomainApps(value: string): AssociatedApp[] | undefined {
  const apps: AssociatedApp[] = [];
  for (const entry of value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const colon = entry.indexOf(':');
    const platform = entry.slice(0, colon);
    const rest = entry.slice(colon + 1);
    if (platform === 'ios') {
      const dot = rest.indexOf('.');
      const teamId = rest.slice(0, dot);
      const bundleId = rest.slice(dot + 1);
      if (dot === -1 || !TEAM_ID.test(teamId) || !BUNDLE_ID.test(bundleId)) return undefined;
      apps.push({ platform, teamId, bundleId });
    } else if (platform === 'android') {
      const [packageName = '', fingerprints = ''] = rest.split('@');
      const sha256CertFingerprints = fingerprints.split(';').map((print) => print.trim().toUpperCase());
      if (!PACKAGE_NAME.test(packageName) || !sha256CertFingerprints.every((print) => SHA256_FINGERPRINT.test(print))) return undefined;
      apps.push({ platform, packageName, sha256CertFingerprints });
    } else {
      return undefined;
    }
  }
  return apps;
}
