import type { Sql } from './client.js';
import { isUuid } from './uuid.js';

export interface UserRecord {
  id: string;
  name: string;
  email: string;
  passwordHash: string;
  createdAt: Date;
}

const columns = (sql: Sql) =>
  sql`id, name, email, password_hash AS "passwordHash", created_at AS "createdAt"`;

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
  };
}
export type UsersRepository = ReturnType<typeof usersRepository>;
