import { createClient, type DeeplinkClient, type User } from '@deeplink/client';

/**
 * The signed-in session: the login token lives in memory and in sessionStorage (it survives a
 * reload of this tab, and ends with the tab). Never localStorage: a token there outlives the tab
 * and is shared with every other one.
 */
const STORAGE_KEY = 'deeplink.session';

export interface Session {
  token: string;
  user: User;
}

type Listener = (session: Session | undefined) => void;

let current: Session | undefined = read();
const listeners = new Set<Listener>();

function read(): Session | undefined {
  try {
    const stored = sessionStorage.getItem(STORAGE_KEY);
    return stored ? (JSON.parse(stored) as Session) : undefined;
  } catch {
    return undefined;
  }
}

export const currentSession = (): Session | undefined => current;

export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function signIn(session: Session): void {
  current = session;
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  for (const listener of listeners) listener(current);
}

export function signOut(): void {
  current = undefined;
  sessionStorage.removeItem(STORAGE_KEY);
  for (const listener of listeners) listener(current);
}

/** Any 401 means the token is no longer good (expired, revoked, password changed): sign out. */
const fetchSigningOutOn401: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  if (response.status === 401 && current) signOut();
  return response;
};

/** The typed client every page uses, sending the session's token. */
export const api: DeeplinkClient = createClient({ baseUrl: `${location.origin}/api`, fetch: fetchSigningOutOn401, retries: 1 });
api.setToken(current?.token);
onSessionChange((session) => api.setToken(session?.token));
