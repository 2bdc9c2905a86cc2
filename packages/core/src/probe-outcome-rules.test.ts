import { describe, expect, it } from 'vitest';
import {
  isConclusiveProbe,
  isFailedProbe,
  nextConsecutiveFailures,
  probeOutcomeClass,
} from './probe-outcome-rules.ts';
import { PROBE_OUTCOMES } from './probe-result.ts';

describe('probe outcome rules', () => {
  it('classifies every outcome', () => {
    expect(Object.fromEntries(PROBE_OUTCOMES.map((o) => [o, probeOutcomeClass(o)]))).toEqual({
      up: 'up',
      degraded: 'up',
      auth_required: 'inconclusive',
      not_mcp: 'failed',
      down: 'failed',
    });
    expect(isFailedProbe('down')).toBe(true);
    expect(isFailedProbe('degraded')).toBe(false);
    expect(isConclusiveProbe('auth_required')).toBe(false);
    expect(isConclusiveProbe('not_mcp')).toBe(true);
  });

  it('counts failures in a row and resets on any answer', () => {
    let n = 0;
    n = nextConsecutiveFailures(n, 'down');
    n = nextConsecutiveFailures(n, 'not_mcp');
    expect(n).toBe(2);
    expect(nextConsecutiveFailures(n, 'up')).toBe(0);
    expect(nextConsecutiveFailures(n, 'degraded')).toBe(0);
    expect(nextConsecutiveFailures(n, 'auth_required')).toBe(0);
  });
});
