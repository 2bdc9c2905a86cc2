/**
 * Wilson score interval for a binomial proportion: unlike the plain ratio it knows how many
 * trials stand behind it, so 3 successes of 3 give [0.44, 1], not "100 %". Counts may be
 * fractional (weighted trials).
 */
export interface WilsonInterval {
  lower: number;
  upper: number;
}

export function wilsonInterval(successes: number, trials: number, z = 1.96): WilsonInterval {
  if (!(trials >= 0) || !Number.isFinite(trials)) throw new RangeError(`trials must be ≥ 0, got ${trials}`);
  if (!(successes >= 0 && successes <= trials)) {
    throw new RangeError(`successes must be within [0, trials], got ${successes} of ${trials}`);
  }
  if (!(z > 0)) throw new RangeError(`z must be > 0, got ${z}`);
  if (trials === 0) return { lower: 0, upper: 1 };
  const p = successes / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const centre = p + z2 / (2 * trials);
  const margin = z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials));
  return {
    lower: Math.max(0, (centre - margin) / denominator),
    upper: Math.min(1, (centre + margin) / denominator),
  };
}

/** Lower bound of the Wilson interval: a proportion we are ~97.5 % sure the truth exceeds. */
export function wilsonLowerBound(successes: number, trials: number, z = 1.96): number {
  return wilsonInterval(successes, trials, z).lower;
}
