// The one build: `npm run build`, the test suite's global set-up and the bench all run this file,
// so the three never drift apart (a step added to one alone once left the others without it).
//   1. dist/ emptied: a file moved or deleted in src/ never ships from an old build.
//   2. tsc: the library and its types.
//   3. the ledger's migrations, numbered SQL files read as the ledger opens
//      (src/ledger/migration-files.ts), copied to dist/ledger/migrations/, where the library
//      (dist/ledger/) and the command's bundle (dist/cli/main.cjs) both find them: tsc copies no SQL.
//   4. the command as it ships: one bundled file and its code cache (scripts/bundle-cli.mjs).
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const node = (args) => execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });

rmSync(`${root}dist`, { recursive: true, force: true });
node(['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json']);
cpSync(`${root}src/ledger/migrations`, `${root}dist/ledger/migrations`, { recursive: true });
node(['scripts/bundle-cli.mjs']);
