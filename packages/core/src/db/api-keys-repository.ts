import type { Sql } from './client.js';
import { isUuid } from './uuid.js';

export interface ApiKeyRecord {
  id: string;
  userId: string;
  name: string;
  /** The key's first characters, shown in key lists. */
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

const columns = (sql: Sql) => sql`id, user_id AS "userId", name, prefix, created_at AS "createdAt", last_used_at AS "lastUsedAt"`;

/** API keys, stored only as the SHA-256 of the secret (and its first characters, for recognition). */
export function apiKeysRepository(sql: Sql) {
  return {
    async create(key: { userId: string; name: string; prefix: string; keyHash: Buffer }): Promise<ApiKeyRecord> {
      const [row] = await sql<ApiKeyRecord[]>`
        INSERT INTO api_keys (user_id, name, prefix, key_hash)
        VALUES (${key.userId}, ${key.name}, ${key.prefix}, ${key.keyHash})
        RETURNING ${columns(sql)}`;
      return row!;
    },

    /** The key whose secret hashes to keyHash, if it exists (deleted keys are gone at once). */
    async findByHash(keyHash: Buffer): Promise<ApiKeyRecord | undefined> {
      const [row] = await sql<ApiKeyRecord[]>`SELECT ${columns(sql)} FROM api_keys WHERE key_hash = ${keyHash}`;
      return row;
    },

    async findById(id: string): Promise<ApiKeyRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<ApiKeyRecord[]>`SELECT ${columns(sql)} FROM api_keys WHERE id = ${id}`;
      return row;
    },

    /** A user's keys, newest first. */
    async listByUser(userId: string): Promise<ApiKeyRecord[]> {
      return sql<ApiKeyRecord[]>`SELECT ${columns(sql)} FROM api_keys WHERE user_id = ${userId} ORDER BY created_at DESC, id`;
    },

    /**
     * Records a use of the key unless one was recorded less than `resolutionSeconds` ago. The
     * condition is in the UPDATE, so API instances racing on the same key write it once.
     */
    async touch(id: string, resolutionSeconds: number): Promise<void> {
      await sql`
        UPDATE api_keys SET last_used_at = now()
        WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at <= now() - make_interval(secs => ${resolutionSeconds}))`;
    },

    async delete(id: string): Promise<void> {
      await sql`DELETE FROM api_keys WHERE id = ${id}`;
    },
  };
}
export type ApiKeysRepository = ReturnType<typeof apiKeysRepository>;
