import type { Sql } from './client.js';
import { isUuid } from './uuid.js';

export interface ApiKeyRecord {
  id: string;
  userId: string;
  name: string;
  createdAt: Date;
}

/** API keys, stored only as the SHA-256 of the secret. */
export function apiKeysRepository(sql: Sql) {
  return {
    async create(key: { userId: string; name: string; keyHash: Buffer }): Promise<ApiKeyRecord> {
      const [row] = await sql<ApiKeyRecord[]>`
        INSERT INTO api_keys (user_id, name, key_hash)
        VALUES (${key.userId}, ${key.name}, ${key.keyHash})
        RETURNING id, user_id AS "userId", name, created_at AS "createdAt"`;
      return row!;
    },

    /** The key whose secret hashes to keyHash, if it exists (deleted keys are gone at once). */
    async findByHash(keyHash: Buffer): Promise<ApiKeyRecord | undefined> {
      const [row] = await sql<ApiKeyRecord[]>`
        SELECT id, user_id AS "userId", name, created_at AS "createdAt"
        FROM api_keys WHERE key_hash = ${keyHash}`;
      return row;
    },

    async findById(id: string): Promise<ApiKeyRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<ApiKeyRecord[]>`
        SELECT id, user_id AS "userId", name, created_at AS "createdAt" FROM api_keys WHERE id = ${id}`;
      return row;
    },

    async delete(id: string): Promise<void> {
      await sql`DELETE FROM api_keys WHERE id = ${id}`;
    },
  };
}
export type ApiKeysRepository = ReturnType<typeof apiKeysRepository>;
