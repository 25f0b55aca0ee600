import {
  AppError, ErrorCode, forbidden, notFound, unauthorized,
  type ApiKey, type ApiKeysRepository, type AuthResult, type LoginBody, type RegisterBody, type User,
  type UserRecord, type UsersRepository,
} from '@deeplink/core';
import { decoyPasswordHash, hashPassword, verifyPassword } from './passwords.js';
import { generateApiKey, hashApiKey, looksLikeApiKey, signAccessToken, verifyAccessToken } from './tokens.js';

/** Who is calling: the user, and the API key when the request used one. */
export interface Principal {
  userId: string;
  apiKeyId?: string;
}

export const toUser = (user: UserRecord): User => ({ id: user.id, name: user.name, email: user.email });

/** Accounts, login tokens and API keys. */
export function authService(deps: {
  users: UsersRepository;
  apiKeys: ApiKeysRepository;
  jwtSecret: string;
  jwtTtlSeconds: number;
}) {
  const { users, apiKeys } = deps;
  const issue = (user: UserRecord): AuthResult => ({
    user: toUser(user),
    token: signAccessToken(user.id, deps.jwtSecret, deps.jwtTtlSeconds),
  });

  return {
    async register(body: RegisterBody): Promise<AuthResult> {
      const user = await users.create({ name: body.name, email: body.email, passwordHash: await hashPassword(body.password) });
      if (!user) {
        throw new AppError(409, ErrorCode.INVALID_REQUEST, 'An account with this email already exists', [
          { field: 'email', message: 'is already registered' },
        ]);
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
      const user = await users.findById(principal.userId);
      if (!user) throw unauthorized('The account behind these credentials no longer exists');
      return toUser(user);
    },

    /** Resolves a Bearer credential (API key or login token) to a principal, or undefined. */
    async authenticate(credential: string): Promise<Principal | undefined> {
      if (looksLikeApiKey(credential)) {
        const key = await apiKeys.findByHash(hashApiKey(credential));
        return key && { userId: key.userId, apiKeyId: key.id };
      }
      const userId = verifyAccessToken(credential, deps.jwtSecret);
      return userId ? { userId } : undefined;
    },

    async createApiKey(principal: Principal, name: string): Promise<ApiKey> {
      if (principal.apiKeyId) throw forbidden('API keys cannot manage API keys; log in to create one');
      const key = generateApiKey();
      const record = await apiKeys.create({ userId: principal.userId, name, keyHash: hashApiKey(key) });
      return { id: record.id, name: record.name, key, createdAt: record.createdAt.toISOString() };
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
