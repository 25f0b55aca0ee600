/**
 * A fresh id for one open (a UUID v4): the API takes 8-64 of `A-Z a-z 0-9 - _`, and the SDK sends
 * the same id on every retry of that open. It only has to be unique, not secret.
 */
export function newOpenId(crypto: Partial<Pick<Crypto, 'randomUUID' | 'getRandomValues'>> | undefined = globalThis.crypto): string {
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  // React Native's Hermes has getRandomValues (with react-native-get-random-values) but not randomUUID.
  const bytes = new Uint8Array(16);
  if (typeof crypto?.getRandomValues === 'function') crypto.getRandomValues(bytes);
  // Without either, Math.random: weaker, but enough for an id that must merely not collide.
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A fresh id for this install (a UUID v4), for install(). Make it once, at the first launch, and
 * keep it in the app's own storage (AsyncStorage, Preferences, localStorage): every call for this
 * install, retries and later launches included, sends the same one, so the install is matched and
 * counted once. The SDK stores nothing itself.
 */
export const newInstallId: (crypto?: Partial<Pick<Crypto, 'randomUUID' | 'getRandomValues'>>) => string = newOpenId;
