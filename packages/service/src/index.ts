export * from './logger.ts';
export * from './problem.ts';
export * from './runtime.ts';
export * from './service-info.ts';
export * from './probing/batch-writer.ts';
export * from './probing/host-limiter.ts';
export * from './probing/probe.job.ts';
