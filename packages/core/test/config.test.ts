import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, usesDevelopmentSecrets } from '../src/config.js';
import { parseClusterUrl } from '../src/redis/cluster-url.js';
import { hashTagOf } from '../src/redis/keys.js';

describe('loadConfig', () => {
  it('fills the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      API_PORT: 3000,
      REDIRECTOR_PORT: 8080,
      SHORT_URL_BASE: 'http://127.0.0.1:8080',
      REDIS_URL: 'redis://127.0.0.1:6379',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/deeplink',
      JWT_TTL_SECONDS: 86400,
      TRUST_PROXY: false,
      CLICK_FLUSH_MS: 50,
      CLICK_BATCH_SIZE: 500,
    });
    expect(usesDevelopmentSecrets(config)).toBe(true);
  });

  it('names every bad variable', () => {
    const attempt = () => loadConfig({ API_PORT: 'eighty', REDIS_URL: 'nope', JWT_SECRET: 'short' });
    expect(attempt).toThrow(/API_PORT: /);
    expect(attempt).toThrow(/REDIS_URL: /);
    expect(attempt).toThrow(/JWT_SECRET: must be at least 32 characters/);
  });

  it('requires real secrets in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET, VISITOR_SALT must be set in production/);
    const config = loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), VISITOR_SALT: 'y'.repeat(16) });
    expect(usesDevelopmentSecrets(config)).toBe(false);
  });

  it('refuses a published secret in production in any letter case and with spaces around it', () => {
    const real = { JWT_SECRET: 'x'.repeat(32), VISITOR_SALT: 'y'.repeat(16) };
    for (const variant of [
      'DEVELOPMENT-ONLY-JWT-SECRET-CHANGE-ME-IN-PRODUCTION',
      ' Development-Only-Jwt-Secret-Change-Me-In-Production\t',
    ]) {
      expect(() => loadConfig({ NODE_ENV: 'production', ...real, JWT_SECRET: variant }), variant).toThrow(
        /JWT_SECRET: a value published with this project/,
      );
    }
    for (const variant of ['DEVELOPMENT-ONLY-VISITOR-SALT-CHANGE-ME', 'development-only-visitor-salt-change-me ']) {
      expect(() => loadConfig({ NODE_ENV: 'production', ...real, VISITOR_SALT: variant }), variant).toThrow(
        /VISITOR_SALT: a value published with this project/,
      );
    }
  });

  it('keeps daily rollups at least as long as hourly ones', () => {
    expect(loadConfig({})).toMatchObject({ HOURLY_RETENTION_MONTHS: 13, DAILY_RETENTION_MONTHS: 0 });
    expect(loadConfig({ HOURLY_RETENTION_MONTHS: '0' })).toMatchObject({ HOURLY_RETENTION_MONTHS: 0 });
    expect(loadConfig({ HOURLY_RETENTION_MONTHS: '6', DAILY_RETENTION_MONTHS: '6' })).toMatchObject({ DAILY_RETENTION_MONTHS: 6 });
    expect(() => loadConfig({ HOURLY_RETENTION_MONTHS: '6', DAILY_RETENTION_MONTHS: '5' })).toThrow(/DAILY_RETENTION_MONTHS: must be 0/);
    expect(() => loadConfig({ HOURLY_RETENTION_MONTHS: '0', DAILY_RETENTION_MONTHS: '24' })).toThrow(/DAILY_RETENTION_MONTHS/);
    expect(() => loadConfig({ HOURLY_RETENTION_MONTHS: '-1' })).toThrow(/HOURLY_RETENTION_MONTHS: /);
  });

  it('addresses a Redis Cluster by REDIS_CLUSTER_NODES or a redis+cluster:// URL, with the queue under a hash tag', () => {
    const byNodes = loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, 10.0.0.2:7001', REDIS_URL: 'redis://app:s3cret@10.0.0.9:6379' });
    expect(byNodes).toMatchObject({ REDIS_URL: 'redis+cluster://app:s3cret@10.0.0.1:7000,10.0.0.2:7001', QUEUE_PREFIX: '{bull}' });
    expect(parseClusterUrl(byNodes.REDIS_URL)).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
      username: 'app',
      password: 's3cret',
    });
    expect(loadConfig({ REDIS_URL: 'redis+cluster://[::1]:7000', QUEUE_PREFIX: 'dl{q1}' })).toMatchObject({ QUEUE_PREFIX: 'dl{q1}' });
    // A single server keeps the prefix as it is.
    expect(loadConfig({ QUEUE_PREFIX: 'dl' })).toMatchObject({ QUEUE_PREFIX: 'dl' });
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1' })).toThrow(/REDIS_CLUSTER_NODES: /);
    expect(() => loadConfig({ REDIS_URL: 'redis+cluster://10.0.0.1:7000,nope' })).toThrow(/REDIS_URL: /);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000', REDIS_PREFIX: '{dl}:' })).toThrow(
      /REDIS_PREFIX: must not hold a \{hash tag\}/,
    );
    expect(hashTagOf('{dl}:clicks:1')).toBe('dl');
    expect(hashTagOf('a{}b{c}')).toBeUndefined();
  });

  it('reads flags and numbers', () => {
    expect(loadConfig({ TRUST_PROXY: '1', RATE_LIMIT_MAX: '7' })).toMatchObject({ TRUST_PROXY: { hops: 1 }, RATE_LIMIT_MAX: 7 });
    expect(loadConfig({ TRUST_PROXY: 'yes' }).TRUST_PROXY).toEqual({ hops: 1 });
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.1' }).TRUST_PROXY).toEqual({ addresses: ['10.0.0.0/8', '192.0.2.1'] });
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/99' })).toThrow(/TRUST_PROXY/);
  });

  it('takes only an http(s) URL for unknown codes', () => {
    expect(loadConfig({}).NOT_FOUND_URL).toBeUndefined();
    expect(loadConfig({ NOT_FOUND_URL: 'https://example.com/missing' }).NOT_FOUND_URL).toBe('https://example.com/missing');
    expect(() => loadConfig({ NOT_FOUND_URL: 'javascript:alert(1)' })).toThrow(/NOT_FOUND_URL: /);
    expect(() => loadConfig({ NOT_FOUND_URL: 'https://example.com/a\r\nSet-Cookie: x' })).toThrow(/NOT_FOUND_URL: /);
  });

  it('takes an origin without a path for the association check', () => {
    expect(loadConfig({}).ASSOCIATION_CHECK_ORIGIN).toBeUndefined();
    expect(loadConfig({ ASSOCIATION_CHECK_ORIGIN: 'http://10.0.0.5:8443' }).ASSOCIATION_CHECK_ORIGIN).toBe('http://10.0.0.5:8443');
    for (const value of ['https://proxy.example.com/files', 'https://proxy.example.com/?x=1', 'ftp://proxy.example.com', 'proxy'])
      expect(() => loadConfig({ ASSOCIATION_CHECK_ORIGIN: value }), value).toThrow(/ASSOCIATION_CHECK_ORIGIN: /);
  });

  it('reads the apps of the default domain', () => {
    const fingerprint = Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, '0')).join(':');
    expect(loadConfig({}).DEFAULT_DOMAIN_APPS).toEqual([]);
    expect(
      loadConfig({ DEFAULT_DOMAIN_APPS: `ios:ABCDE12345.com.example.app, android:com.example.app@${fingerprint}` }).DEFAULT_DOMAIN_APPS,
    ).toEqual([
      { platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.app' },
      { platform: 'android', packageName: 'com.example.app', sha256CertFingerprints: [fingerprint.toUpperCase()] },
    ]);
    expect(() => loadConfig({ DEFAULT_DOMAIN_APPS: 'ios:short.com.example.app' })).toThrow(/DEFAULT_DOMAIN_APPS: /);
    expect(() => loadConfig({ DEFAULT_DOMAIN_APPS: 'android:com.example.app@AB:CD' })).toThrow(/DEFAULT_DOMAIN_APPS: /);
    expect(() => loadConfig({ DEFAULT_DOMAIN_APPS: 'windows:app' })).toThrow(/DEFAULT_DOMAIN_APPS: /);
  });
});
