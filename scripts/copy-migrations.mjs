// tsc builds only the TypeScript: the ledger's migrations, numbered SQL files read as the ledger
// opens (src/ledger/migration-files.ts), are copied into dist/ledger/migrations/, where the library
// (dist/ledger/) and the command's bundle (dist/cli/main.cjs) both find them.
import { cpSync } from 'node:fs';

cpSync('src/ledger/migrations', 'dist/ledger/migrations', { recursive: true });
