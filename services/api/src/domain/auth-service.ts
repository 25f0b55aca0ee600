import {
  type ApiKey,
  type ApiKeyListItem,
  type AuthResult,
  BoundedMap,
  type ChangePasswordBody,
  conflict,
  forbidden,
  invalidRequest,
  type LoginBody,
  notFound,
  type RegisterBody,
  unauthorized,
  type User,
} from '@deeplink/core';
import type { ApiKeyRecord, ApiKeysRepository, UserRecord, UsersRepository } from '@deeplink/core/db';
import { decoyPasswordHash, hashPassword, verifyPassword } from '@deeplink/core/passwords';
import type { AccountCache } from './accounts.js';
import type { CredentialFailures } from './credential-failures.js';
import { generateApiKey, hashApiKey, looksLikeApiKey, SHOWN_KEY_PREFIX_LENGTH, signAccessToken, tokenVerifier } from './tokens.js';

/** Unknown API keys remembered (by hash), so the same wrong key does not reach the database again soon. */
const UNKNOWN_KEYS_MAX = 10_000;
const UNKNOWN_KEY_TTL_MS = 60_000;
/**
 * Valid API keys remembered (by hash) for an hour after this process found or created them, so
 * they get past the failed-credential guard of their address (see isProven).
 */
const PROVEN_KEYS_MAX = 10_000;
const PROVEN_KEY_TTL_MS = 60 * 60_000;
/** `lastUsedAt` of a key moves at most this often: a write per request would cost more than the request. */
export const KEY_USAGE_RESOLUTION_SECONDS = 60;
/** lastUsedAt as answered: rounded down to its resolution, as it claims no more precision than that. */
const usageTime = (at: Date) =>
  new Date(Math.floor(at.getTime() / (KEY_USAGE_RESOLUTION_SECONDS * 1000)) * KEY_USAGE_RESOLUTION_SECONDS * 1000).toISOString();

/** Who is calling: the user, and the API key when the request used one. */
export interface Principal {
  userId: string;
  apiKeyId?: string;
}

export const toUser = (user: Pick<UserRecord, 'id' | 'name' | 'email'>): User => ({ id: user.id, name: user.name, email: user.email });

/** Accounts, login tokens and API keys. */
export function authService(deps: {
  users: UsersRepository;
  apiKeys: ApiKeysRepository;
  accounts: AccountCache;
  jwtSecret: string;
  jwtTtlSeconds: number;
  /** Wrong current passwords count here, per address and per account. */
  failures: CredentialFailures;
  /** The clock token expiry is read against (tests move it). */
  now?: () => number;
}) {
  const { users, apiKeys, accounts } = deps;
  const tokens = tokenVerifier(deps.jwtSecret, { now: deps.now });
  const issue = (user: UserRecord, version = user.tokenVersion): AuthResult => ({
    user: toUser(user),
    token: signAccessToken(user.id, version, deps.jwtSecret, deps.jwtTtlSeconds),
  });
  /** Key hash (base64) → until when it is known not to exist. */
  const unknownKeys = new BoundedMap<string, number>(UNKNOWN_KEYS_MAX);
  /** Key hash (base64) → until when it counts as proven. */
  const provenKeys = new BoundedMap<string, number>(PROVEN_KEYS_MAX);
  const prove = (hash: Buffer) => provenKeys.set(hash.toString('base64'), Date.now() + PROVEN_KEY_TTL_MS);

  /** Moves the key's lastUsedAt when the stored one is a minute old or more; no write otherwise. */
  const recordUse = async (key: ApiKeyRecord) => {
    if (key.lastUsedAt && Date.now() - key.lastUsedAt.getTime() < KEY_USAGE_RESOLUTION_SECONDS * 1000) return;
    // Bookkeeping only: a failed write must not fail the request it would have recorded.
    await apiKeys.touch(key.id, KEY_USAGE_RESOLUTION_SECONDS).catch(() => {});
  };

  return {
    async register(body: RegisterBody): Promise<AuthResult> {
      const user = await users.create({ name: body.name, email: body.email, passwordHash: await hashPassword(body.password) });
      if (!user) {
        throw conflict('An account with this email already exists', [{ field: 'email', message: 'is already registered' }]);
      }
      return issue(user);
    },

    async login(body: LoginBody): Promise<AuthResult> {
      const user = await users.findByEmail(body.email);
      const valid = await verifyPassword(user?.passwordHash ?? (await decoyPasswordHash()), body.password);
      if (!user || !valid) throw unauthorized('Email or password is incorrect');
      return issue(user);
    },

    async me(principal: Principal): Promise<User> {
      const account = await accounts.get(principal.userId);
      if (!account) throw unauthorized('The account behind these credentials no longer exists');
      return toUser(account);
    },

    /**
     * Resolves a Bearer credential (API key or login token) to a principal, or undefined. A login
     * token counts only while its version is the user's current one (see revokeTokens).
     */
    async authenticate(credential: string): Promise<Principal | undefined> {
      if (looksLikeApiKey(credential)) {
        const hash = hashApiKey(credential);
        const text = hash.toString('base64');
        if ((unknownKeys.get(text) ?? 0) > Date.now()) return undefined;
        const key = await apiKeys.findByHash(hash);
        if (!key) {
          unknownKeys.set(text, Date.now() + UNKNOWN_KEY_TTL_MS);
          return undefined;
        }
        prove(hash);
        await recordUse(key);
        return { userId: key.userId, apiKeyId: key.id };
      }
      const claims = tokens.verify(credential);
      if (!claims) return undefined;
      return (await accounts.get(claims.userId))?.tokenVersion === claims.version ? { userId: claims.userId } : undefined;
    },

    /**
     * Whether the credential may pass the guard against addresses that keep sending bad ones: a
     * login token whose signature verifies (checked in process; a valid one cannot be guessed), or
     * an API key this process found or created in the last hour (authenticate still looks it up,
     * so a revoked key fails). Neighbours behind one address keep working while a guesser's
     * made-up credentials stay stopped before any lookup.
     */
    isProven(credential: string): boolean {
      if (!looksLikeApiKey(credential)) return tokens.verify(credential) !== undefined;
      return (provenKeys.get(hashApiKey(credential).toString('base64')) ?? 0) > Date.now();
    },

    /** Ends every login token of the caller ("log out everywhere"); API keys stay valid. */
    async revokeTokens(principal: Principal): Promise<void> {
      if (principal.apiKeyId) throw forbidden('Log in to end your sessions; an API key cannot');
      await accounts.revoke(principal.userId);
    },

    /**
     * Changes the password and ends every earlier login token; returns a new one for this session.
     * A wrong current password is a failed credential of the client's address and of the account:
     * past the budget both get 429 before the password is checked, so a stolen token is no oracle
     * for the password, from one address or many.
     */
    async changePassword(principal: Principal, body: ChangePasswordBody, address: string): Promise<AuthResult> {
      if (principal.apiKeyId) throw forbidden('Log in to change the password; an API key cannot');
      const subjects = [address, `account:${principal.userId}`];
      for (const subject of subjects) await deps.failures.check(subject);
      const user = await users.findById(principal.userId);
      if (!user) throw unauthorized('The account behind these credentials no longer exists');
      if (!(await verifyPassword(user.passwordHash, body.currentPassword))) {
        await Promise.all(subjects.map((subject) => deps.failures.record(subject)));
        throw invalidRequest('The current password is incorrect', [{ field: 'currentPassword', message: 'is incorrect' }]);
      }
      const version = await accounts.revoke(user.id, await hashPassword(body.newPassword));
      return issue(user, version);
    },

    async createApiKey(principal: Principal, name: string): Promise<ApiKey> {
      if (principal.apiKeyId) throw forbidden('API keys cannot manage API keys; log in to create one');
      const key = generateApiKey();
      prove(hashApiKey(key));
      const record = await apiKeys.create({
        userId: principal.userId,
        name,
        prefix: key.slice(0, SHOWN_KEY_PREFIX_LENGTH),
        keyHash: hashApiKey(key),
      });
      return { id: record.id, name: record.name, key, createdAt: record.createdAt.toISOString() };
    },

    /** The caller's keys without their secrets; API keys may read the list, only login tokens change it. */
    async listApiKeys(principal: Principal): Promise<ApiKeyListItem[]> {
      return (await apiKeys.listByUser(principal.userId)).map((key) => ({
        id: key.id,
        name: key.name,
        prefix: key.prefix,
        createdAt: key.createdAt.toISOString(),
        lastUsedAt: key.lastUsedAt ? usageTime(key.lastUsedAt) : null,
      }));
    },

    async deleteApiKey(principal: Principal, id: string): Promise<void> {
      if (principal.apiKeyId) throw forbidden('API keys cannot manage API keys; log in to delete one');
      const key = await apiKeys.findById(id);
      if (!key) throw notFound('API key not found');
      if (key.userId !== principal.userId) throw forbidden('This API key belongs to another account');
      await apiKeys.delete(id);
    },
  };
}
export type AuthService = ReturnType<typeof authService>;
