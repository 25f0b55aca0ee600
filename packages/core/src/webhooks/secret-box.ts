import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/**
 * Encrypts endpoint secrets at rest (AES-256-GCM). Signing needs a secret back in clear, so it
 * cannot be hashed like an API key; a database dump alone does not give them away. The key comes
 * from WEBHOOK_SECRET_KEY, or, while that is unset, from JWT_SECRET (HKDF, its own purpose), so a
 * deployment needs no new secret; changing the key makes the stored secrets unreadable (each
 * endpoint then needs a rotation).
 */
export function webhookSecretBox(keyMaterial: string) {
  const key = Buffer.from(hkdfSync('sha256', keyMaterial, 'deeplink', 'webhook endpoint secrets', 32));
  // Tells a wrong key apart from a damaged value in the error the delivery log shows.
  const keyId = createHash('sha256').update(key).digest('base64url').slice(0, 8);
  return {
    seal(secret: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return [VERSION, keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
    },
    /** The secret, or undefined when it was sealed with another key (or the value is damaged). */
    open(value: string): string | undefined {
      const [version, sealedWith, iv, tag, sealed] = value.split('.');
      if (version !== VERSION || sealedWith !== keyId || !iv || !tag || sealed === undefined) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return undefined;
      }
    },
  };
}
export type WebhookSecretBox = ReturnType<typeof webhookSecretBox>;

/** The box of this deployment: WEBHOOK_SECRET_KEY, else JWT_SECRET, as the API and the worker both read it. */
export const configuredSecretBox = (config: { WEBHOOK_SECRET_KEY?: string; JWT_SECRET: string }): WebhookSecretBox =>
  webhookSecretBox(config.WEBHOOK_SECRET_KEY ?? config.JWT_SECRET);
