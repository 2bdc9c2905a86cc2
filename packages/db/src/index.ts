export * from './availability.ts';
export * from './client.ts';
export * from './meta.ts';
export * from './migrate.ts';
export * from './repositories/index.ts';
