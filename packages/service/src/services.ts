import { agentKeysService } from './agents/agent-keys.service.ts';
import { openKeyRing } from './receipts/key-ring.ts';
import { receiptsService } from './receipts/receipts.service.ts';
import { reportIngestService } from './reports/report-ingest.service.ts';
import type { Runtime } from './runtime.ts';
import { registrationService } from './servers/registration.service.ts';
import { serverResolver } from './servers/server-resolver.ts';
import { baselinesCache } from './trust/baselines-cache.ts';
import { directoryService } from './trust/directory.service.ts';
import { insightsService } from './trust/insights.service.ts';
import { trustService } from './trust/trust.service.ts';

/**
 * The service layer: one instance per process, shared by the REST routes, the MCP tools and
 * the HTML pages, so every front end gives the same answer to the same question.
 */
export async function createServices(runtime: Runtime) {
  const servers = serverResolver(runtime);
  const ring = await openKeyRing(runtime);
  const receipts = receiptsService(runtime, ring);
  const agentKeys = agentKeysService(runtime);
  const baselines = baselinesCache(runtime);
  const trust = trustService({ runtime, servers, baselines, agentKeys, receipts });
  return {
    runtime,
    servers,
    receipts,
    agentKeys,
    trust,
    directory: directoryService(runtime),
    insights: insightsService({ runtime, trust, baselines }),
    reports: reportIngestService(runtime, servers),
    registration: registrationService(runtime, servers),
  };
}

export type Services = Awaited<ReturnType<typeof createServices>>;
