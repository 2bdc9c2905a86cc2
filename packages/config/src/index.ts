export * from './env.schema.ts';
export * from './load-config.ts';
