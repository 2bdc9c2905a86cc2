import { agentKeysService } from './agents/agent-keys.service.ts';
import { openKeyRing } from './receipts/key-ring.ts';
import { receiptsService } from './receipts/receipts.service.ts';
import { reportIngestService } from './reports/report-ingest.service.ts';
import type { Runtime } from './runtime.ts';
import { registrationService } from './servers/registration.service.ts';
import { serverResolver } from './servers/server-resolver.ts';

/**
 * The service layer: one instance per process, shared by the REST routes, the MCP tools and
 * the HTML pages, so every front end gives the same answer to the same question.
 */
export async function createServices(runtime: Runtime) {
  const servers = serverResolver(runtime);
  const ring = await openKeyRing(runtime);
  return {
    runtime,
    servers,
    receipts: receiptsService(runtime, ring),
    agentKeys: agentKeysService(runtime),
    reports: reportIngestService(runtime, servers),
    registration: registrationService(runtime, servers),
  };
}

export type Services = Awaited<ReturnType<typeof createServices>>;
