// Runs a Node entry point (the built CLI) in this very process and, when the process exits, writes
// its own resource usage to the file named by MEDIABATCH_BENCH_STATS.
//
// Why this way: `spawnSync`/`spawn` give no rusage of the child, `/usr/bin/time` is not guaranteed
// to exist, and reading /proc/<pid>/status (VmHWM) from the parent races with the child's exit.
// A process can always ask the kernel about itself: `process.resourceUsage()` is getrusage(2)
// with RUSAGE_SELF, so userCPUTime + systemCPUTime cover every thread of the process (main thread,
// libuv pool, V8 GC helpers) and maxRSS is the kernel's peak resident set size (ru_maxrss, KiB).
// The 'exit' hook runs on a normal end, on process.exit() and on process.exitCode alike, and the
// write is synchronous, so nothing is lost. The wrapper itself adds one tiny module to the process.
//
// A run on a PostgreSQL ledger also reports the statements its connections sent (one round trip
// each): every connection publishes its count on a diagnostics channel when it closes
// (src/ledger/postgres/sync-connection.ts), and this wrapper, in the same process, adds them up.
// null when no connection closed (a SQLite ledger).
//
// usage: MEDIABATCH_BENCH_STATS=/tmp/x.json node child-stats.mjs dist/cli/main.js run ... --json
import { channel } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const statsFile = process.env.MEDIABATCH_BENCH_STATS;
const entry = process.argv[2];
if (!statsFile || !entry) {
  process.stderr.write('usage: MEDIABATCH_BENCH_STATS=<file> node child-stats.mjs <entry.js> [args...]\n');
  process.exit(64);
}

// The entry reads process.argv.slice(2) as its own arguments, exactly as when started directly.
process.argv = [process.argv[0] ?? process.execPath, resolve(entry), ...process.argv.slice(3)];

let ledgerRoundTrips = null;
// Held here for the life of the process: a channel no one references may be collected.
const closedConnections = channel('mediabatch:postgres-connection-closed');
closedConnections.subscribe((message) => {
  ledgerRoundTrips = (ledgerRoundTrips ?? 0) + message.roundTrips;
});

process.on('exit', (code) => {
  const usage = process.resourceUsage();
  writeFileSync(
    statsFile,
    JSON.stringify({
      exitCode: code,
      userCpuMicros: usage.userCPUTime,
      systemCpuMicros: usage.systemCPUTime,
      maxRssKib: usage.maxRSS,
      uptimeMs: process.uptime() * 1000,
      ledgerRoundTrips,
    }),
  );
});

await import(pathToFileURL(resolve(entry)).href);
