// Regenerates the command reference (README section and docs/commands.md) from src/cli/flags.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderCommandsDoc, withReadmeReference } from './commands-doc.js';

const root = resolve(import.meta.dirname, '..');
const readmePath = resolve(root, 'README.md');
writeFileSync(readmePath, withReadmeReference(readFileSync(readmePath, 'utf8')));
writeFileSync(resolve(root, 'docs/commands.md'), renderCommandsDoc());
console.log('wrote README.md (command reference) and docs/commands.md');
