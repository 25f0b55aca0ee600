import type { Sql } from './client.js';
import { isUuid } from './uuid.js';

export interface UserRecord {
  id: string;
  name: string;
  email: string;
  passwordHash: string;
  /** Login tokens signed with an earlier version are refused. */
  tokenVersion: number;
  createdAt: Date;
}

/** What every authenticated request needs of its user: the public profile and the token version. */
export type AccountRecord = Pick<UserRecord, 'id' | 'name' | 'email' | 'tokenVersion'>;

const columns = (sql: Sql) =>
  sql`id, name, email, password_hash AS "passwordHash", token_version AS "tokenVersion", created_at AS "createdAt"`;

/** Users: the account rows behind register, login and every authenticated request. */
export function usersRepository(sql: Sql) {
  return {
    /** Inserts a user; returns undefined when the email is already registered. */
    async create(user: { name: string; email: string; passwordHash: string }): Promise<UserRecord | undefined> {
      const [row] = await sql<UserRecord[]>`
        INSERT INTO users (name, email, password_hash)
        VALUES (${user.name}, ${user.email}, ${user.passwordHash})
        ON CONFLICT (lower(email)) DO NOTHING
        RETURNING ${columns(sql)}`;
      return row;
    },

    async findByEmail(email: string): Promise<UserRecord | undefined> {
      const [row] = await sql<UserRecord[]>`SELECT ${columns(sql)} FROM users WHERE lower(email) = lower(${email})`;
      return row;
    },

    async findById(id: string): Promise<UserRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<UserRecord[]>`SELECT ${columns(sql)} FROM users WHERE id = ${id}`;
      return row;
    },

    /** The user's profile and current token version (no password hash), or undefined for an unknown user. */
    async findAccount(id: string): Promise<AccountRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<AccountRecord[]>`SELECT id, name, email, token_version AS "tokenVersion" FROM users WHERE id = ${id}`;
      return row;
    },

    /** Revokes every login token of the user (and sets a new password hash when given); returns the new version. */
    async revokeTokens(id: string, passwordHash?: string): Promise<number> {
      const [row] = await sql<{ tokenVersion: number }[]>`
        UPDATE users SET token_version = token_version + 1, password_hash = coalesce(${passwordHash ?? null}, password_hash)
        WHERE id = ${id} RETURNING token_version AS "tokenVersion"`;
      return row!.tokenVersion;
    },
  };
}
export type UsersRepository = ReturnType<typeof usersRepository>;
