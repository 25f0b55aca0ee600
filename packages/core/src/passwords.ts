import { hash, verify, type Algorithm } from '@node-rs/argon2';

// OWASP's argon2id baseline: 19 MiB memory, 2 iterations, 1 lane.
// (Algorithm is a const enum, which isolated modules cannot read at run time; 2 is Argon2id.)
const OPTIONS = { algorithm: 2 as Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** Hashes a password with argon2id; the result embeds its own salt and parameters. */
export const hashPassword = (password: string): Promise<string> => hash(password, OPTIONS);

/** Checks a password against a stored argon2id hash. */
export const verifyPassword = (passwordHash: string, password: string): Promise<boolean> =>
  verify(passwordHash, password).catch(() => false);

// A real hash of a random password, verified against when the email is unknown, so a login for a
// missing account takes as long as one with a wrong password and does not reveal which emails exist.
let decoyHash: Promise<string> | undefined;
export const decoyPasswordHash = (): Promise<string> => (decoyHash ??= hashPassword(crypto.randomUUID()));
