export * from './worker.ts';
