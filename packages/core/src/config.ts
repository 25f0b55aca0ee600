import { z } from 'zod';
import { clusterUrl, isClusterUrl, parseClusterUrl } from './redis/cluster-url.js';
import { hashTagOf, queuePrefix } from './redis/keys.js';
import { parseTrustProxy } from './trust-proxy.js';
import { parseDefaultDomainApps } from './apps/association.js';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } from './default-urls.mjs';

const DEV_JWT_SECRET = 'development-only-jwt-secret-change-me-in-production';
const DEV_VISITOR_SALT = 'development-only-visitor-salt-change-me';
/** Secrets anyone can read in this repository (the development defaults and the docs' examples): refused in production. */
const PUBLISHED_SECRETS = new Set([DEV_JWT_SECRET, DEV_VISITOR_SALT, 'change-me', 'changeme', 'secret', 'dev-secret-change-me']);
/** A published secret in other letter case or with spaces around it is still the published secret. */
const isPublishedSecret = (value: string | undefined): boolean => value !== undefined && PUBLISHED_SECRETS.has(value.trim().toLowerCase());

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().min(0);
const clusterNodesValid = (url: string): boolean => {
  try {
    return (parseClusterUrl(url)?.nodes.length ?? 0) > 0;
  } catch {
    return false;
  }
};
const flag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
  .default('')
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

/** Every environment variable the services read, with its default. The README lists them. */
const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  DATABASE_URL: z.url().default(DEFAULT_DATABASE_URL),
  DATABASE_POOL_MAX: positiveInt.default(10),
  /**
   * A streaming replica the API sends its analytics and export reads to; the primary answers them
   * while it is unset or unreachable.
   */
  DATABASE_READ_URL: z.url().optional(),
  /** A read the replica has not answered in this long goes to the primary, and the replica is left alone until it answers again. */
  DATABASE_READ_TIMEOUT_MS: positiveInt.default(5000),
  /**
   * The API's exports read through pools of their own, this many connections each (on
   * DATABASE_URL, and on DATABASE_READ_URL when set); as many exports run at once per process.
   */
  DATABASE_EXPORT_POOL_MAX: positiveInt.default(4),
  /** Exports one account may have open at once, per API process. */
  EXPORTS_PER_USER: positiveInt.default(2),
  /** An export whose client reads nothing for this long is ended, freeing its connection. */
  EXPORT_IDLE_TIMEOUT_SECONDS: positiveInt.default(30),
  /** No export lasts longer than this. */
  EXPORT_TIMEOUT_SECONDS: positiveInt.default(900),
  /** redis:// or rediss:// for one server; redis+cluster://host:port[,host:port…] for a Redis Cluster. */
  REDIS_URL: z
    .string()
    .default(DEFAULT_REDIS_URL)
    .refine(
      (url) => (isClusterUrl(url) ? clusterNodesValid(url) : z.url().safeParse(url).success),
      'must be a redis:// URL or redis+cluster://host:port,…',
    ),
  /** A Redis Cluster's nodes (`host:port,host:port`, any of them); overrides REDIS_URL's address, keeps its credentials. */
  REDIS_CLUSTER_NODES: z
    .string()
    .optional()
    .refine((nodes) => nodes === undefined || clusterNodesValid(clusterUrl(nodes)), 'must be host:port[,host:port…]'),
  /** Prefix of every key and channel the services write in Redis (link cache, rate limits). */
  REDIS_PREFIX: z.string().default(''),
  /** BullMQ key prefix; on Redis Cluster it is wrapped in a hash tag (`{bull}`) unless it holds one. */
  QUEUE_PREFIX: z.string().min(1).default('bull'),

  API_HOST: z.string().default('127.0.0.1'),
  API_PORT: port.default(3000),
  REDIRECTOR_HOST: z.string().default('127.0.0.1'),
  REDIRECTOR_PORT: port.default(8080),
  /** Where the API and the redirector serve /metrics and the detail of /readyz (the worker serves them on WORKER_PORT). */
  METRICS_HOST: z.string().default('127.0.0.1'),
  API_METRICS_PORT: port.default(9091),
  REDIRECTOR_METRICS_PORT: port.default(9092),
  SHORT_URL_BASE: z.url().default('http://127.0.0.1:8080'),
  /**
   * How often each open live click stream gets a `: ping` comment, so proxies that close quiet
   * connections leave it open; a stream's place in its account's count lasts three of these.
   */
  LIVE_PING_INTERVAL_MS: positiveInt.min(1_000).max(60_000).default(15_000),
  /** The longest destination (Location, intent URL, iOS page target) a link may have with its customParameters merged in. */
  MAX_DESTINATION_BYTES: positiveInt.default(2048),
  /**
   * Which proxies' X-Forwarded-For entries to believe: off (empty, 0, false), a hop count (1 = the
   * one proxy in front; true/yes mean 1), or a comma-separated list of proxy addresses and CIDRs.
   * The client is the rightmost entry not added by a trusted proxy.
   */
  TRUST_PROXY: z
    .string()
    .default('')
    .transform((value, context) => {
      const parsed = parseTrustProxy(value);
      if (parsed === undefined)
        context.addIssue({ code: 'custom', message: 'must be off, a hop count, or a comma-separated list of addresses and CIDRs' });
      return parsed ?? false;
    }),

  /**
   * The apps whose association files the default short-link domain serves (it is shared by every
   * account, so only the operator chooses): `ios:TEAMID.bundle.id`, `android:package@FP[;FP]`, comma-separated.
   */
  DEFAULT_DOMAIN_APPS: z
    .string()
    .default('')
    .transform((value, context) => {
      const apps = parseDefaultDomainApps(value);
      if (apps === undefined)
        context.addIssue({
          code: 'custom',
          message: 'must be comma-separated ios:TEAMID.bundle.id or android:package.name@SHA256:FINGERPRINT[;…] entries',
        });
      return apps ?? [];
    }),

  /**
   * The DNS servers the API and the worker ask for custom domains' TXT records (`ip` or `ip:port`,
   * comma-separated); the system's resolvers when unset.
   */
  DNS_SERVERS: z
    .string()
    .optional()
    .transform((value) =>
      value
        ?.split(',')
        .map((server) => server.trim())
        .filter(Boolean),
    )
    .refine(
      (servers) => servers === undefined || servers.every((server) => /^(\[[0-9a-f:.]+\]|[0-9.]+)(:\d{1,5})?$|^[0-9a-f:]+$/i.test(server)),
      'must be comma-separated ip or ip:port entries',
    ),

  /** The product name the redirector's pages (404, 410, the iOS page, previews) show. */
  BRAND_NAME: z.string().trim().min(1).max(60).default('Deeplink'),

  /** Where the short-link domain sends unknown codes (a 302) instead of its 404 page. */
  NOT_FOUND_URL: z
    .url({ protocol: /^https?$/ })
    .refine((url) => !/[\u0000-\u0020\u007f]/.test(url), 'must not hold spaces or control characters')
    .optional(),

  /**
   * Where the debug page (`?d=1`) fetches a domain's association files from, instead of
   * `https://<hostname>` (the Host header still names the domain): a proxy's origin, or a test server.
   */
  ASSOCIATION_CHECK_ORIGIN: z
    .url({ protocol: /^https?$/ })
    .refine((url) => {
      const parsed = URL.parse(url);
      return parsed !== null && parsed.pathname === '/' && parsed.search === '' && parsed.hash === '';
    }, 'must be an origin (scheme, host, port) without a path')
    .optional(),

  /** Worker threads the API draws PNG QR codes on, so a large one never holds up other requests. */
  QR_RENDER_THREADS: positiveInt.max(16).default(1),
  /** Let a QR code's `logoUrl` name a private or loopback address (tests; a deployment fetching logos from its own network). */
  QR_LOGO_ALLOW_PRIVATE: flag,

  /**
   * The key webhook endpoints' signing secrets are encrypted with at rest; unset, one is derived
   * from JWT_SECRET. Changing it (or JWT_SECRET while it is unset) leaves every stored secret
   * unreadable: each endpoint's deliveries fail until its secret is rotated.
   */
  WEBHOOK_SECRET_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  /**
   * Deliver webhooks to private, loopback, link-local and other non-public addresses. Off: such
   * targets are refused after DNS resolution, on every attempt. For development and tests only.
   */
  WEBHOOK_ALLOW_PRIVATE: flag,
  /** How long one delivery attempt may take (connecting, sending, the answer's status and first bytes). */
  WEBHOOK_TIMEOUT_MS: positiveInt.max(60_000).default(10_000),
  /** The wait before a failed delivery's first retry; each later one waits three times longer (8 attempts in all). */
  WEBHOOK_RETRY_BASE_MS: positiveInt.default(60_000),
  /** Deliveries the worker sends at once. */
  WEBHOOK_CONCURRENCY: positiveInt.max(200).default(16),
  /** Delivery log rows are kept this long (and at most WEBHOOK_DELIVERIES_PER_ENDPOINT per endpoint). */
  WEBHOOK_DELIVERY_RETENTION_DAYS: positiveInt.default(30),
  WEBHOOK_DELIVERIES_PER_ENDPOINT: positiveInt.default(1_000),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  JWT_TTL_SECONDS: positiveInt.default(24 * 60 * 60),

  RATE_LIMIT_WINDOW_SECONDS: positiveInt.default(60),
  /** Requests per window for an authenticated user (JWT or API key). */
  RATE_LIMIT_MAX: positiveInt.default(600),
  /** Requests per window for an unauthenticated client address. */
  RATE_LIMIT_ANONYMOUS_MAX: positiveInt.default(120),
  /** Requests per window per address to /auth/register and /auth/login together. */
  RATE_LIMIT_AUTH_MAX: positiveInt.default(10),
  /**
   * Open calls per window per app key: every install of an app shares its key, so this is the
   * app's total (100 a second by default); raise it for an app opened more often.
   */
  APP_RATE_LIMIT_MAX: positiveInt.default(6000),
  /** Open calls per window per client address, whatever key it sends (several devices may share an address). */
  APP_RATE_LIMIT_ADDRESS_MAX: positiveInt.default(120),

  VISITOR_SALT: z.string().min(16, 'must be at least 16 characters').optional(),
  CLICK_FLUSH_MS: positiveInt.default(50),
  CLICK_BATCH_SIZE: positiveInt.default(500),
  /** Clicks held in memory waiting for the queue (or the spool) before new ones are dropped (and counted). */
  CLICK_BUFFER_MAX: positiveInt.default(100_000),
  /** Where the redirector spools sealed click batches while the queue's Redis is unreachable, and at shutdown. */
  CLICK_SPOOL_DIR: z.string().min(1).default('.data/click-spool'),
  /** The spool's size limit; past it, batches stay in memory (CLICK_BUFFER_MAX), then clicks are dropped. */
  CLICK_SPOOL_MAX_BYTES: positiveInt.default(1024 * 1024 * 1024),
  /** The redirector's /readyz turns unavailable while the spool holds more than this. */
  CLICK_SPOOL_READY_MAX_BYTES: positiveInt.default(64 * 1024 * 1024),
  /** Refuse to start when the queue's Redis could lose jobs (no AOF, or an eviction policy); always so in production. */
  REQUIRE_DURABLE_REDIS: flag,
  /** Start anyway on a queue Redis that could lose jobs, even in production (logged at every start). */
  ALLOW_VOLATILE_REDIS: flag,
  /** The launcher (`npm start`) has checked the queue's Redis and said what it risks: no warning per service again. */
  QUEUE_DURABILITY_NOTED: flag,
  LINK_CACHE_MAX: positiveInt.default(100_000),
  /** …and at most this many bytes of records and prepared answers, so a few huge links cannot hold memory. */
  LINK_CACHE_MAX_BYTES: positiveInt.default(64 * 1024 * 1024),
  /** Unknown codes remembered in process (their own small cache, apart from the links'). */
  NEGATIVE_CACHE_MAX: positiveInt.default(10_000),
  /** Lookups of unknown codes beyond the caches, per client address: a token bucket of this rate (per second)… */
  UNKNOWN_CODE_RATE: positiveInt.default(2),
  /** …and this burst. Past it, that address's uncached codes get a 404 without a lookup. */
  UNKNOWN_CODE_BURST: positiveInt.default(20),
  /**
   * Long links (/?link=…) a custom domain may make links of: each distinct one becomes a link of
   * the domain's owner on its first visit; past this many, new ones are a 404 (existing ones keep working).
   */
  LONG_LINKS_PER_DOMAIN_MAX: positiveInt.default(100_000),
  /**
   * How long a redirector uses a cached link before checking it against Redis again (in the
   * background). Invalidation messages replace changed links at once; this only bounds how long a
   * lost message can leave a link stale, so it can be long enough to cost nothing under load.
   */
  LINK_CACHE_TTL_MS: positiveInt.default(60_000),
  NEGATIVE_CACHE_TTL_SECONDS: positiveInt.default(60),
  ALLOW_UWS_FALLBACK: flag,

  /**
   * Click batches a worker process holds at once; those that arrive during a write share the next
   * transaction. A job completes only when its transaction commits, so this bounds the batches of
   * the transaction being written and of the next one together.
   */
  WORKER_CONCURRENCY: positiveInt.default(128),
  /**
   * Rollup transactions start at most this often: under load, each gathers more clicks into the
   * same rows, which costs PostgreSQL far less per click; a click waits at most this long for its
   * transaction. 0 starts each transaction as soon as the last one commits.
   */
  WORKER_WRITE_INTERVAL_MS: nonNegativeInt.max(5_000).default(250),
  /** Where the worker answers /healthz, /readyz and /metrics. */
  WORKER_HOST: z.string().default('127.0.0.1'),
  WORKER_PORT: port.default(8090),
  /**
   * Workers renew their batches' locks this often (a lock lasts twice this) and look this often
   * for batches whose lock expired (their worker died): a crashed worker's batches are back within
   * about three times this.
   */
  WORKER_STALL_INTERVAL_MS: positiveInt.default(3_000),
  /** Failed batches are kept this long for inspection (their client addresses hashed once they fail for good). */
  FAILED_BATCH_RETENTION_DAYS: positiveInt.default(7),
  /** …and at most this many. */
  FAILED_BATCH_RETENTION_COUNT: positiveInt.default(10_000),
  /** Failed batches are retried by the maintenance task, with back-off, at most this many times before they fail for good. */
  FAILED_BATCH_MAX_RETRIES: positiveInt.default(24),
  /** How long the worker may take on SIGTERM to finish batches in flight before it exits anyway. */
  WORKER_SHUTDOWN_TIMEOUT_MS: positiveInt.default(30_000),
  GEOIP_DB: z.string().optional(),
  BATCH_RETENTION_DAYS: positiveInt.default(7),
  /**
   * Whole UTC months of hourly rollups kept before the current one; older monthly partitions are
   * dropped. 0 keeps them forever. 13 keeps any one-year hourly report complete.
   */
  HOURLY_RETENTION_MONTHS: nonNegativeInt.default(13),
  /** Whole UTC months of daily rollups kept before the current one; 0 (the default) keeps them forever. */
  DAILY_RETENTION_MONTHS: nonNegativeInt.default(0),
  CRON_RECONCILE: z.string().default('*/5 * * * *'),
  CRON_PRUNE_BATCHES: z.string().default('17 * * * *'),
  CRON_QUEUE_REPORT: z.string().default('* * * * *'),
  CRON_RETRY_FAILED: z.string().default('* * * * *'),
  /** Rollup partitions: create the coming months' ones, drop those past the retention. */
  CRON_PARTITIONS: z.string().default('41 3 * * *'),
  /** Active custom domains: look their TXT records up again. */
  CRON_DOMAIN_CHECK: z.string().default('23 * * * *'),
  /** Webhook delivery log: delete rows past WEBHOOK_DELIVERY_RETENTION_DAYS or WEBHOOK_DELIVERIES_PER_ENDPOINT. */
  CRON_PRUNE_WEBHOOK_DELIVERIES: z.string().default('37 * * * *'),
  /** Combination rollups: sum each UTC day that is over into its daily combination rows, once. */
  CRON_ROLL_COMBINATIONS: z.string().default('7 * * * *'),
  /** Install clicks (deferred deep links): delete the rows whose token expired. */
  CRON_PRUNE_INSTALL_CLICKS: z.string().default('53 * * * *'),
  /**
   * How long an active custom domain's TXT record may lack the token before the domain turns
   * pending and its hostname can be proven by another account (0: at the first check that misses it).
   */
  DOMAIN_VERIFICATION_GRACE_HOURS: nonNegativeInt.default(72),
});

export type Env = z.infer<typeof envSchema>;

/** The name of every environment variable the services read. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape);
export type Config = Omit<Env, 'JWT_SECRET' | 'VISITOR_SALT'> & { JWT_SECRET: string; VISITOR_SALT: string };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses the environment once at start-up. Throws a ConfigError naming every bad variable.
 * Secrets have development defaults so `npm start` works on a fresh clone; production requires them.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const config = parsed.data;
  if (config.REDIS_CLUSTER_NODES) config.REDIS_URL = clusterUrl(config.REDIS_CLUSTER_NODES, config.REDIS_URL);
  const cluster = isClusterUrl(config.REDIS_URL);
  if (cluster && hashTagOf(config.REDIS_PREFIX) !== undefined) {
    throw new ConfigError(
      'invalid configuration: REDIS_PREFIX: must not hold a {hash tag} on Redis Cluster (it would put every key in one slot)',
    );
  }
  config.QUEUE_PREFIX = queuePrefix(config.QUEUE_PREFIX, cluster);
  // Long ranges read whole days from the daily rollups and only their edge hours from the hourly
  // ones: daily rows dropped before hourly ones would leave the middle of a report empty.
  const keepsDailyForever = config.DAILY_RETENTION_MONTHS === 0;
  const hourlyForever = config.HOURLY_RETENTION_MONTHS === 0;
  if (!keepsDailyForever && (hourlyForever || config.DAILY_RETENTION_MONTHS < config.HOURLY_RETENTION_MONTHS)) {
    throw new ConfigError('invalid configuration: DAILY_RETENTION_MONTHS: must be 0 (forever) or at least HOURLY_RETENTION_MONTHS');
  }
  const missing = (['JWT_SECRET', 'VISITOR_SALT'] as const).filter((name) => !config[name]);
  if (config.NODE_ENV === 'production' && missing.length > 0) {
    throw new ConfigError(`invalid configuration: ${missing.join(', ')} must be set in production`);
  }
  const published = (['JWT_SECRET', 'VISITOR_SALT'] as const).filter((name) => isPublishedSecret(config[name]));
  if (config.NODE_ENV === 'production' && published.length > 0) {
    throw new ConfigError(
      `invalid configuration: ${published.join(', ')}: a value published with this project cannot be a production secret; generate one (openssl rand -hex 32)`,
    );
  }
  return {
    ...config,
    JWT_SECRET: config.JWT_SECRET ?? DEV_JWT_SECRET,
    VISITOR_SALT: config.VISITOR_SALT ?? DEV_VISITOR_SALT,
  };
}

/** True when a development default stands in for a secret; services warn about it at start. */
export const usesDevelopmentSecrets = (config: Config): boolean =>
  config.JWT_SECRET === DEV_JWT_SECRET || config.VISITOR_SALT === DEV_VISITOR_SALT;
