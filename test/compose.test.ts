import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VARIABLES } from '@deeplink/core';
import { STAND_INS } from './containers/stand-ins.js';

const dockerDir = join(import.meta.dirname, '../docker');
interface ComposeService {
  restart?: string;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }> | string[];
  volumes?: string[];
  ports?: string[];
  image?: string;
  build?: { dockerfile: string; secrets?: string[] };
}
const compose = parse(readFileSync(join(dockerDir, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  secrets: Record<string, { file: string }>;
};
const services = compose.services;
const ours = ['api', 'redirector', 'worker'] as const;

describe('docker/compose.yaml', () => {
  it('restarts every service unless stopped, and health-checks all but Prometheus', () => {
    for (const [name, service] of Object.entries(services)) {
      expect(service.restart, name).toBe('unless-stopped');
      if (name !== 'prometheus') expect(service.healthcheck?.test, name).toBeDefined();
    }
  });

  it('checks PostgreSQL over TCP and each of our services by its /readyz', () => {
    expect(services.postgres!.healthcheck!.test).toEqual(expect.arrayContaining(['pg_isready', '-h', '127.0.0.1']));
    const ports = { api: 3000, redirector: 8080, worker: 8090 };
    for (const name of ours) expect(services[name]!.healthcheck!.test.join(' ')).toContain(`127.0.0.1:${ports[name]}/readyz`);
  });

  it('runs Redis with the persistence the click queue needs', () => {
    const command = services.redis!.command!.join(' ');
    expect(command).toContain('--appendonly yes');
    expect(command).toContain('--appendfsync everysec');
    expect(command).toContain('--maxmemory-policy noeviction');
  });

  it('sets only variables the services read, and scrapes each one with Prometheus', () => {
    for (const name of ours) {
      const environment = services[name]!.environment!;
      for (const variable of Object.keys(environment)) expect(CONFIG_VARIABLES, `${name}: ${variable}`).toContain(variable);
      expect(environment.METRICS_HOST).toBe('0.0.0.0');
    }
    const prometheus = services.prometheus!;
    expect(prometheus.volumes!.join(' ')).toContain('./alerts.yml:/etc/prometheus/alerts.yml');
    const scrape = parse(readFileSync(join(dockerDir, 'prometheus.yml'), 'utf8')) as {
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    const targets = scrape.scrape_configs.flatMap((job) => job.static_configs.flatMap((c) => c.targets));
    expect(targets.sort()).toEqual(['api:9091', 'redirector:9092', 'worker:8090']);
  });

  it('starts the redirector and the worker once the API (which migrates) is healthy', () => {
    for (const name of ['redirector', 'worker']) expect(services[name]!.depends_on).toEqual({ api: { condition: 'service_healthy' } });
  });

  it('publishes each port on a host port a variable can move, the default port otherwise', () => {
    expect(services.api!.ports).toEqual(['${API_PUBLISHED_PORT:-3000}:3000']);
    expect(services.redirector!.ports).toEqual(['${REDIRECTOR_PUBLISHED_PORT:-8080}:8080']);
    expect(services.prometheus!.ports).toEqual(['${PROMETHEUS_PUBLISHED_PORT:-9090}:9090']);
  });

  it('gives every npm in the builds the extra CA as a build secret, which no layer keeps', () => {
    expect(compose.secrets.ca!.file).toBe('${BUILD_EXTRA_CA_CERTS:-./no-extra-ca.pem}');
    for (const name of ours) {
      const build = services[name]!.build!;
      expect(build.secrets, name).toEqual(['ca']);
      const dockerfile = readFileSync(join(dockerDir, '..', build.dockerfile), 'utf8');
      const npmRuns = dockerfile.split(/\n(?=[A-Z]+ )/).filter((instruction) => instruction.includes('npm ci'));
      expect(npmRuns.length, name).toBe(2);
      for (const run of npmRuns) expect(run, name).toMatch(/^RUN --mount=type=secret,id=ca .*NODE_EXTRA_CA_CERTS=\/run\/secrets\/ca/s);
      expect(dockerfile, name).not.toMatch(/^(COPY|ADD|ENV)\b.*(secrets|\.pem|CA_CERTS)/m);
    }
  });

  it('builds on pinned base images, each with a stand-in in test/containers under the same name', () => {
    const bases = ['api', 'redirector', 'worker', 'postgres'].flatMap((name) =>
      [...readFileSync(join(dockerDir, `${name}.Dockerfile`), 'utf8').matchAll(/^FROM (\S+:\S+)/gm)].map((match) => match[1]),
    );
    const images = [...new Set([...bases, services.redis!.image, services.prometheus!.image])].sort();
    expect(images).toEqual([
      'node:20-bookworm-slim',
      'node:22-bookworm-slim',
      'postgres:15-bookworm',
      'prom/prometheus:v2.53.0',
      'redis:7.2-bookworm',
    ]);
    expect(
      Object.keys(STAND_INS)
        .map((name) => name.replace(/^docker\.io\/(library\/)?/, ''))
        .sort(),
    ).toEqual(images);
  });
});
