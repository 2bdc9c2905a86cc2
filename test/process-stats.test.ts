import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cpuSeconds, reapedChildrenCpuSeconds } from '../scripts/lib/process-stats.ts';

const run = promisify(execFile);

describe('process-stats (the CPU columns of the benches)', () => {
  it("counts a finished child's CPU once it has been waited for", async () => {
    const before = reapedChildrenCpuSeconds();
    // a child that spins until it has used 300 ms of its own CPU time
    await run(process.execPath, [
      '-e',
      'const s = process.cpuUsage(); while (process.cpuUsage(s).user < 300000) {}',
    ]);
    const used = reapedChildrenCpuSeconds() - before;
    expect(used).toBeGreaterThanOrEqual(0.25);
    expect(used).toBeLessThan(30);
  });

  it('reads a live process and gives 0 for one that is gone', () => {
    expect(cpuSeconds(process.pid)).toBeGreaterThan(0);
    expect(cpuSeconds(2 ** 22 + 12345)).toBe(0);
  });
});
