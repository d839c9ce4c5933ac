import { readdirSync, readFileSync } from 'node:fs';

/**
 * What the whole machine's CPUs did over a stretch of time, from /proc/stat: the cores busy
 * (user, system, interrupts: every process, the bench's own, the servers' and anyone else's) and
 * the cores idle waiting on disk I/O, each averaged over the stretch. Beside a run's figures it
 * tells a CPU-bound run (busy near the core count) from one that waits (busy well below it).
 */
export interface CpuWindow {
  busyCores: number;
  iowaitCores: number;
}

interface Ticks {
  total: number;
  idle: number;
  iowait: number;
  /** The cpuN lines: the first line sums them. */
  cores: number;
}

function ticks(): Ticks | null {
  let text: string;
  try {
    text = readFileSync('/proc/stat', 'utf8');
  } catch {
    return null;
  }
  const lines = text.split('\n');
  const fields = (lines[0] ?? '').trim().split(/\s+/).slice(1, 9).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const cores = lines.filter((line) => /^cpu\d+ /.test(line)).length;
  return { total: user + nice + system + idle + iowait + irq + softirq + steal, idle, iowait, cores };
}

/** Starts a window now; `end()` closes it. NaN figures where /proc/stat cannot be read. */
export function machineCpu(): { end(): CpuWindow } {
  const start = ticks();
  return {
    end() {
      const stop = ticks();
      if (start === null || stop === null || stop.total === start.total) {
        return { busyCores: Number.NaN, iowaitCores: Number.NaN };
      }
      const { cores } = stop;
      const total = stop.total - start.total;
      const idle = stop.idle - start.idle;
      const iowait = stop.iowait - start.iowait;
      return {
        busyCores: ((total - idle - iowait) / total) * cores,
        iowaitCores: (iowait / total) * cores,
      };
    },
  };
}

/** Clock ticks per second of /proc's CPU times: USER_HZ, 100 on every Linux this runs on. */
const USER_HZ = 100;

/**
 * CPU seconds (user + system, every thread) used so far by the living child processes of this
 * process whose command line contains `marker`: the bench's own servers, e.g. Swift's
 * `launch-server.py`. NaN where /proc cannot be read or no such child lives.
 */
export function childCpuSeconds(marker: string): number {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return Number.NaN;
  }
  let ticks = 0;
  let found = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // pid (comm) state ppid ... utime stime: fields 14 and 15, counted after the comm's ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== process.pid) continue;
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
      found += 1;
    } catch {
      // Gone between the listing and the read.
    }
  }
  return found === 0 ? Number.NaN : ticks / USER_HZ;
}
