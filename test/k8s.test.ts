import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJobQueue, jobIds } from '@observatory/queue';
import { deleteQueueKeys } from '@observatory/queue/testing';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { shutdownDeadlineMs } from '../apps/cli/src/lifecycle.ts';

// No cluster on the build machines: the manifests are checked by parsing them, and the one
// fact they share with the code (the BullMQ key KEDA watches) is checked against real Redis.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const k8s = path.join(root, 'infra/k8s');
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

// biome-ignore lint/suspicious/noExplicitAny: manifests are free-form YAML
type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [key: string]: any };

let manifests: Manifest[];
const all = (kind: string) => manifests.filter((m) => m.kind === kind);
const one = (kind: string, name: string) => {
  const found = manifests.filter((m) => m.kind === kind && m.metadata.name === name);
  expect(found, `${kind}/${name}`).toHaveLength(1);
  return found[0]!;
};
const configMap = () => one('ConfigMap', 'observatory-config').data as Record<string, string>;
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

beforeAll(async () => {
  const kustomization = parseAllDocuments(
    await readFile(path.join(k8s, 'kustomization.yaml'), 'utf8'),
  )[0]!.toJS();
  manifests = [];
  for (const file of kustomization.resources as string[]) {
    for (const doc of parseAllDocuments(await readFile(path.join(k8s, file), 'utf8'))) {
      expect(doc.errors, file).toEqual([]);
      manifests.push(doc.toJS({ maxAliasCount: 100 }) as Manifest);
    }
  }
});

describe('infra/k8s manifests', () => {
  it('hold Deployments for api, worker and scheduler with their PDBs, KEDA scaling and config', () => {
    const kinds = manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort();
    expect(kinds).toEqual(
      [
        'ConfigMap/observatory-config',
        'Deployment/observatory-api',
        'Deployment/observatory-scheduler',
        'Deployment/observatory-worker',
        'Namespace/mcp-observatory',
        'PodDisruptionBudget/observatory-api',
        'PodDisruptionBudget/observatory-scheduler',
        'PodDisruptionBudget/observatory-worker',
        'ScaledObject/observatory-worker',
        'Secret/observatory-secrets',
        'Service/observatory-api',
        'TriggerAuthentication/observatory-redis',
      ].sort(),
    );
  });

  it('run each role of the one image, configured from the ConfigMap and the Secret', () => {
    const secret = one('Secret', 'observatory-secrets').stringData as Record<string, string>;
    for (const role of ['api', 'worker', 'scheduler']) {
      const d = one('Deployment', `observatory-${role}`);
      expect(d.spec.selector.matchLabels).toEqual(d.spec.template.metadata.labels);
      const [container, ...others] = d.spec.template.spec.containers;
      expect(others).toEqual([]);
      expect(container.image).toBe('mcp-trust-observatory');
      // the image's entrypoint is the observatory CLI (infra/Dockerfile): args pick the role
      expect(container.args).toEqual([role]);
      expect(container.envFrom).toEqual([
        { configMapRef: { name: 'observatory-config' } },
        { secretRef: { name: 'observatory-secrets' } },
      ]);
      expect(d.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
      expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
      expect(container.resources.requests.cpu).toBeDefined();
    }
    // distributed mode: both stores come from the Secret
    expect(Object.keys(secret)).toEqual(expect.arrayContaining(['DATABASE_URL', 'REDIS_URL']));
    expect(configMap().HOST).toBe('0.0.0.0');
  });

  it('check the api for readiness on /ready and liveness on /health, and route the Service to it', () => {
    const api = one('Deployment', 'observatory-api');
    const [container] = api.spec.template.spec.containers;
    const port = container.ports.find((p: { name: string }) => p.name === 'http');
    expect(port.containerPort).toBe(Number(configMap().PORT));
    expect(container.readinessProbe.httpGet).toEqual({ path: '/ready', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    // liveness must never be the dependency check: a slow database must not restart the API
    expect(container.livenessProbe.httpGet.path).not.toBe('/ready');
    const service = one('Service', 'observatory-api');
    expect(matches(service.spec.selector, api.spec.template.metadata.labels)).toBe(true);
    expect(service.spec.ports[0].targetPort).toBe('http');
  });

  it('give every pod a termination grace period longer than the probe timeout', () => {
    const probeTimeoutS = Number(configMap().PROBE_TIMEOUT_MS) / 1000;
    expect(probeTimeoutS).toBeGreaterThan(0);
    const deadlineS = shutdownDeadlineMs({ PROBE_TIMEOUT_MS: probeTimeoutS * 1000 }) / 1000;
    for (const d of all('Deployment')) {
      const grace = d.spec.template.spec.terminationGracePeriodSeconds;
      // the runtime waits PROBE_TIMEOUT_MS + 2 s for active jobs before closing
      expect(grace, d.metadata.name).toBeGreaterThan(probeTimeoutS + 2);
      // a shutdown that hangs ends itself (exit 1, saying where) before the kubelet kills it
      const preStop = d.spec.template.spec.containers[0].lifecycle?.preStop?.exec?.command;
      const pauseS = preStop?.[0] === 'sleep' ? Number(preStop[1]) : 0;
      expect(grace, d.metadata.name).toBeGreaterThan(pauseS + deadlineS);
    }
  });

  it('have PodDisruptionBudgets that each select exactly one Deployment', () => {
    const deployments = all('Deployment');
    for (const pdb of all('PodDisruptionBudget')) {
      const selected = deployments.filter((d) =>
        matches(pdb.spec.selector.matchLabels, d.spec.template.metadata.labels),
      );
      expect(
        selected.map((d) => d.metadata.name),
        pdb.metadata.name,
      ).toEqual([pdb.metadata.name]);
      expect(pdb.spec.minAvailable ?? pdb.spec.maxUnavailable).toBeGreaterThan(0);
    }
    // a single-replica deployment with minAvailable 1 would block every node drain
    for (const pdb of all('PodDisruptionBudget').filter((p) => p.spec.minAvailable !== undefined)) {
      expect(one('Deployment', pdb.metadata.name).spec.replicas).toBeGreaterThan(pdb.spec.minAvailable);
    }
  });

  it('scale workers with KEDA on the probe queue waiting list named as BullMQ names it', () => {
    const scaled = one('ScaledObject', 'observatory-worker');
    expect(scaled.apiVersion).toBe('keda.sh/v1alpha1');
    expect(scaled.spec.scaleTargetRef.name).toBe('observatory-worker');
    // KEDA owns the replica count
    expect(one('Deployment', 'observatory-worker').spec.replicas).toBeUndefined();
    expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    const [trigger, ...others] = scaled.spec.triggers;
    expect(others).toEqual([]);
    expect(trigger.type).toBe('redis');
    expect(trigger.metadata.listName).toBe(`${configMap().QUEUE_PREFIX}:probe:wait`);
    expect(Number(trigger.metadata.listLength)).toBeGreaterThan(0);
    const auth = one('TriggerAuthentication', trigger.authenticationRef.name);
    const secret = one('Secret', 'observatory-secrets').stringData as Record<string, string>;
    for (const ref of auth.spec.secretTargetRef) {
      expect(ref.name).toBe('observatory-secrets');
      expect(secret[ref.key], ref.key).toBeDefined();
    }
  });
});

describe('the BullMQ key KEDA watches', () => {
  it('is the Redis list "<QUEUE_PREFIX>:probe:wait" holding waiting probe jobs', async () => {
    const prefix = `obs-k8s-${randomBytes(4).toString('hex')}`;
    const queue = createJobQueue({ redisUrl: REDIS_URL, prefix });
    const redis = new Redis(REDIS_URL);
    try {
      const slot = new Date();
      await queue.enqueue('probe', [
        {
          id: jobIds.probe(1, slot),
          payload: { serverId: 1, url: 'https://a.example/mcp', slot: slot.toISOString() },
        },
        {
          id: jobIds.probe(2, slot),
          payload: { serverId: 2, url: 'https://b.example/mcp', slot: slot.toISOString() },
        },
      ]);
      // exactly what the KEDA redis scaler runs: LLEN <listName>
      expect(await redis.llen(`${prefix}:probe:wait`)).toBe(2);
      expect((await queue.counts()).probe.waiting).toBe(2);
    } finally {
      await queue.close(1_000);
      redis.disconnect();
      await deleteQueueKeys(REDIS_URL, prefix);
    }
  });
});
