// A manifest read by the built library, whole (loadManifest, the reference) or streamed
// (manifestItems), in a process of its own so that its peak RSS is the reading's alone.
// usage (through child-stats.mjs): manifest-read-child.mjs whole|streamed <manifest.yaml>
import { resolve } from 'node:path';

const [mode, file] = process.argv.slice(2);
const { loadManifest, manifestItems } = await import(resolve(import.meta.dirname, '../../dist/index.js'));
let count = 0;
if (mode === 'whole') count = loadManifest(file).items.length;
else for await (const _item of manifestItems(file)) count += 1;
process.stdout.write(`${count}\n`);
