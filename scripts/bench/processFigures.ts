// What Linux's /proc says of a process the bench started or watches: its CPU so far and its resident memory.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second (USER_HZ), the unit of /proc/<pid>/stat's CPU times. */
export function clockTicksPerSecond(): number {
  return (ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100);
}

/** utime + stime of a process in clock ticks, and its parent, from /proc/<pid>/stat; undefined when it has gone. */
export function processTicks(pid: number): { ticks: number; parent: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ticks: Number(fields[11]) + Number(fields[12]), parent: Number(fields[1]) };
}

/**
 * Clock ticks of a process and of each of its children, by pid (PostgreSQL's postmaster and its backends, which come
 * and go: a caller compares pid by pid). Empty when the process has gone.
 */
export function processAndChildrenTicks(parent: number): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const process_ = processTicks(pid);
    if (process_ && (pid === parent || process_.parent === parent)) ticks.set(pid, process_.ticks);
  }
  return ticks;
}

/** User + system CPU of a running process so far, in ms. */
export function cpuMilliseconds(pid: number): number {
  const process_ = processTicks(pid);
  if (!process_) throw new Error(`process ${pid} has gone: its CPU cannot be read`);
  return (process_.ticks * 1000) / clockTicksPerSecond();
}

/** A running process's resident set (VmRSS), in MB (MiB), not rounded: a goal such as "< 160 MB" compares this. */
export function rssMegabytes(pid: number): number {
  const kilobytes = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN);
  return kilobytes / 1024;
}
