export type { Behaviour, BehaviourName } from './behaviours.ts';
export { BEHAVIOUR_NAMES, DEFAULT_FAIL_RATE, DEFAULT_SLOW_MS } from './behaviours.ts';
export type { Fleet, FleetOptions, FleetServer, FleetStats } from './fleet.ts';
export { deadUrl, startFleet } from './fleet.ts';
export { type ToolDefinition, toolSet } from './tool-sets.ts';
