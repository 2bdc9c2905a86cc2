/**
 * @observatory/core — pure domain logic (no I/O; time comes in as `now`).
 * Inputs are camelCase TypeScript; results that the API serves as they are use the snake_case
 * JSON names of COMPAT.md.
 */
export * from './anomalies.ts';
export * from './baselines.ts';
export * from './canonical-json.ts';
export * from './categories.ts';
export * from './compliance.ts';
export * from './history.ts';
export * from './latency-histogram.ts';
export * from './probe-outcome-rules.ts';
export * from './probe-result.ts';
export * from './tool-drift.ts';
export * from './trust-rules.ts';
export * from './trust-score.ts';
export * from './uptime.ts';
export * from './wilson.ts';
