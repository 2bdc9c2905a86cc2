import type { Sql } from '../client.ts';
import { anomaliesRepository } from './anomalies.repository.ts';
import { apiKeysRepository } from './api-keys.repository.ts';
import { auditRepository } from './audit.repository.ts';
import { baselinesRepository } from './baselines.repository.ts';
import { directoryRepository } from './directory.repository.ts';
import { interactionReportsRepository } from './interaction-reports.repository.ts';
import { probeResultsRepository } from './probe-results.repository.ts';
import { rollupsRepository } from './rollups.repository.ts';
import { serversRepository } from './servers.repository.ts';
import { signingKeysRepository } from './signing-keys.repository.ts';

export * from './anomalies.repository.ts';
export * from './api-keys.repository.ts';
export * from './audit.repository.ts';
export * from './baselines.repository.ts';
export * from './directory.repository.ts';
export * from './interaction-reports.repository.ts';
export * from './probe-results.repository.ts';
export * from './rollups.repository.ts';
export * from './servers.repository.ts';
export * from './signing-keys.repository.ts';

export function createRepositories(sql: Sql) {
  return {
    servers: serversRepository(sql),
    probeResults: probeResultsRepository(sql),
    interactionReports: interactionReportsRepository(sql),
    apiKeys: apiKeysRepository(sql),
    anomalies: anomaliesRepository(sql),
    audit: auditRepository(sql),
    baselines: baselinesRepository(sql),
    directory: directoryRepository(sql),
    rollups: rollupsRepository(sql),
    signingKeys: signingKeysRepository(sql),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
