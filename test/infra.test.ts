import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// Docker does not run on the build machines, so the deployment files are checked by parsing.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const read = (file: string) => readFile(path.join(root, file), 'utf8');

describe('docker-compose.yml', () => {
  it('runs postgres, redis (noeviction + AOF), api, a scalable worker and a scheduler', async () => {
    // compose files use YAML merge keys (<<: *app)
    const compose = parse(await read('docker-compose.yml'), { merge: true });
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'postgres', 'redis', 'scheduler', 'worker']);
    for (const app of ['api', 'worker', 'scheduler']) {
      const s = compose.services[app];
      expect(s.command).toEqual([app]);
      expect(s.environment.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
      expect(s.environment.REDIS_URL).toBe('redis://redis:6379');
      expect(s.depends_on.postgres.condition).toBe('service_healthy');
    }
    // workers scale with --scale: they must not pin a container name or a host port
    expect(compose.services.worker.container_name).toBeUndefined();
    expect(compose.services.worker.ports).toBeUndefined();
    const redisConf = await read('infra/redis.conf');
    expect(redisConf).toMatch(/^maxmemory-policy noeviction$/m);
    expect(redisConf).toMatch(/^appendonly yes$/m);
  });
});

describe('infra/Dockerfile', () => {
  it('is multi-stage and runs as a non-root user', async () => {
    const dockerfile = await read('infra/Dockerfile');
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^USER node$/m);
    // every workspace package.json is copied before npm ci, or the install misses a workspace
    const pkg = JSON.parse(await read('package.json'));
    expect(pkg.workspaces).toEqual(['packages/*', 'apps/*']);
    for (const dir of ['api', 'worker', 'scheduler', 'cli'])
      expect(dockerfile).toContain(`COPY apps/${dir}/package.json`);
    for (const dir of ['config', 'core', 'db', 'probe', 'queue', 'receipts', 'service', 'testkit'])
      expect(dockerfile).toContain(`COPY packages/${dir}/package.json`);
  });
});
