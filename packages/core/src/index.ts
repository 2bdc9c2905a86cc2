export * from './probe-result.ts';
