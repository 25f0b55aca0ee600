// How a Redis Cluster is addressed; kept apart from the client so config.ts can read it without ioredis.

const CLUSTER_SCHEME = 'redis+cluster://';

/** The nodes a Cluster client starts from and the credentials it uses on every node. */
export interface ClusterAddress {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
}

/**
 * Parses `redis+cluster://[user:password@]host:port[,host:port…]` (any of the cluster's nodes;
 * the client learns the rest from them). Undefined for a URL of another scheme; throws on a
 * cluster URL it cannot read.
 */
export function parseClusterUrl(url: string): ClusterAddress | undefined {
  if (!url.startsWith(CLUSTER_SCHEME)) return undefined;
  const rest = url.slice(CLUSTER_SCHEME.length).replace(/\/.*$/, '');
  const at = rest.lastIndexOf('@');
  const [user = '', password] = at >= 0 ? rest.slice(0, at).split(':') : [];
  const nodes = (at >= 0 ? rest.slice(at + 1) : rest).split(',').map((node) => {
    const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(node.trim());
    if (!match || Number(match[2]) > 65535) throw new Error(`"${node}" is not a host:port`);
    return { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port: Number(match[2]) };
  });
  return {
    nodes,
    ...(user && { username: decodeURIComponent(user) }),
    ...(password !== undefined && { password: decodeURIComponent(password) }),
  };
}

/** The cluster URL of REDIS_CLUSTER_NODES (`host:port,host:port`), carrying REDIS_URL's credentials. */
export function clusterUrl(nodes: string, credentialsFrom?: string): string {
  let credentials = '';
  try {
    const url = new URL(credentialsFrom ?? '');
    if (url.username || url.password) credentials = `${url.username}${url.password ? `:${url.password}` : ''}@`;
  } catch {
    // No usable REDIS_URL: no credentials.
  }
  return `${CLUSTER_SCHEME}${credentials}${nodes.replace(/\s+/g, '')}`;
}

export const isClusterUrl = (url: string): boolean => url.startsWith(CLUSTER_SCHEME);
