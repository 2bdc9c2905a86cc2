export * from './probe-dispatcher.ts';
export * from './scheduler.ts';
