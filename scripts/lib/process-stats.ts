/**
 * CPU time and resident memory of processes, read from /proc (Linux), for benchmarks and soak
 * runs that watch their child processes and the databases beside them.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** VmRSS of a process in bytes, or null once it is gone. */
export function rssBytes(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces and parentheses: split after its last ")"
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** User + system CPU seconds a process has used so far (0 once it is gone). */
export function cpuSeconds(pid: number): number {
  const f = statFields(pid);
  // after the name: state(0) ppid(1) … utime(11) stime(12)
  return f ? (Number(f[11]) + Number(f[12])) / CLOCK_TICKS : 0;
}

/**
 * User + system CPU seconds of this process's children that have exited and been waited for
 * (cutime + cstime): a one-shot child such as a load generator, measured once it is done.
 */
export function reapedChildrenCpuSeconds(): number {
  const f = statFields(process.pid);
  // after the name: … utime(11) stime(12) cutime(13) cstime(14)
  return f ? (Number(f[13]) + Number(f[14])) / CLOCK_TICKS : 0;
}

/** Direct children of `pid` (e.g. the backends of a postmaster). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(Number(entry));
    if (f && Number(f[1]) === pid) out.push(Number(entry));
  }
  return out;
}

/**
 * CPU seconds of a group of processes given by a function (re-evaluated each time, so
 * short-lived children such as Postgres backends are counted while they live). Exited
 * children's time is lost, so pooled, long-lived connections are what this measures well.
 */
export function groupCpuSeconds(pids: () => number[]): number {
  return pids().reduce((sum, pid) => sum + cpuSeconds(pid), 0);
}

/** Samples of one process's RSS over time. */
export class RssSampler {
  readonly samples: Array<{ at: number; bytes: number }> = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly pid: number,
    private readonly everyMs: number,
  ) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  sample(): void {
    const bytes = rssBytes(this.pid);
    if (bytes !== null) this.samples.push({ at: Date.now(), bytes });
  }

  get maxBytes(): number {
    return Math.max(0, ...this.samples.map((s) => s.bytes));
  }

  get lastBytes(): number {
    return this.samples.at(-1)?.bytes ?? 0;
  }
}
