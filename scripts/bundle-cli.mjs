// The command is one file: after tsc has built dist/, dist/cli/main.js and everything it imports
// (our modules and the runtime packages written in JavaScript) are bundled into dist/cli/main.cjs.
// Node took about 0.6 s of CPU at every command's start to find, read and link the 540 modules
// it was made of (Kysely alone is 263); one file of the same code loads in a third of that. Then
// dist/cli/main.js becomes scripts/cli-launcher.mjs, which runs the bundle through V8's code cache,
// made here by one `--help`: compiling the bundle was most of what was left. The bundle is
// CommonJS because V8's code cache is open to a script, not to an ES module, on Node 20.
// The library (dist/index.js and the rest) is left as tsc built it. Packages with native code or
// loaded only when used (better-sqlite3; pg and the AWS SDK, imported when a postgres:// ledger or
// an s3:// location asks for them) stay outside, loaded from node_modules as before.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const entry = 'dist/cli/main.js';
const bundled = 'dist/cli/main.cjs';

await build({
  entryPoints: [entry],
  outfile: bundled,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['better-sqlite3', 'pg', 'pg-native', '@aws-sdk/*'],
  // pg and the AWS SDK, loaded when used, are required: a script run through the code cache
  // (scripts/cli-launcher.mjs) has no loader for import() but Node's experimental one.
  supported: { 'dynamic-import': false },
  // A CommonJS file has no import.meta: its URL is the bundle's own (src/version.ts reads beside it).
  define: { 'import.meta.url': '__mediabatchBundleUrl' },
  banner: { js: "const __mediabatchBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
  legalComments: 'none',
});
copyFileSync('scripts/cli-launcher.mjs', entry);
chmodSync(entry, 0o755);
rmSync(`${bundled}.cache`, { force: true });
execFileSync(process.execPath, [entry, '--help'], {
  env: { ...process.env, MEDIABATCH_BUILD_CODE_CACHE: '1' },
  stdio: 'ignore',
});
