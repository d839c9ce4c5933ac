// The command is one file: after tsc has built dist/, dist/cli/main.js and everything it imports
// (our modules and the runtime packages written in JavaScript) are bundled into that one file.
// Node took about 0.6 s of CPU at every command's start to find, read and link the 540 modules
// it was made of (Kysely alone is 263); one file of the same code loads in a third of that. The
// library (dist/index.js and the rest) is left as tsc built it. Packages with native code or
// loaded only when used (better-sqlite3; pg and the AWS SDK, imported when a postgres:// ledger or
// an s3:// location asks for them) stay outside, loaded from node_modules as before.
import { renameSync } from 'node:fs';
import { build } from 'esbuild';

const entry = 'dist/cli/main.js';
const bundled = 'dist/cli/main.bundle.js';

await build({
  entryPoints: [entry],
  outfile: bundled,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', 'pg', 'pg-native', '@aws-sdk/*'],
  // Packages written as CommonJS call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as mediabatchRequire } from 'node:module';\nconst require = mediabatchRequire(import.meta.url);",
  },
  logLevel: 'warning',
  legalComments: 'none',
});
renameSync(bundled, entry);
