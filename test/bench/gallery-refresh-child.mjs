// Scenario 14's child (gallery-refresh-bench.ts): one gallery refresh of a big batch, timed in
// the process that makes it, as a run makes it when it ends: writeGallery() from the package
// root, which reads the ledger a page of items at a time (the ledger's itemHistories).
//
// usage: node --expose-gc gallery-refresh-child.mjs <dist folder> <manifest> <ledger>
// Prints one JSON line: the refresh's wall and CPU time, the peak RSS before it (Node, modules,
// the manifest) and after it, and the page's size.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, manifestFile, ledgerPath] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const rssMb = () => process.resourceUsage().maxRSS / 1024;
const cpuMs = () => {
  const usage = process.resourceUsage();
  return (usage.userCPUTime + usage.systemCPUTime) / 1000;
};

const { loadManifest, writeGallery } = await load('index.js');
const manifest = loadManifest(manifestFile);
// A run refreshes its page long after it loaded the manifest: the loading's garbage is gone by
// then, and is collected here too (node --expose-gc), so that it does not count as the refresh's.
globalThis.gc?.();
const before = { rssMb: rssMb(), cpuMs: cpuMs(), at: performance.now() };
const written = await writeGallery(manifest, { ledger: ledgerPath });
const result = {
  refreshMs: performance.now() - before.at,
  refreshCpuMs: cpuMs() - before.cpuMs,
  rssBeforeMb: before.rssMb,
  peakRssMb: rssMb(),
  items: written.items,
  pageBytes: statSync(written.written).size,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
