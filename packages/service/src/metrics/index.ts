export * from './metrics-server.ts';
export * from './process-metrics.ts';
export * from './scrape-registry.ts';
