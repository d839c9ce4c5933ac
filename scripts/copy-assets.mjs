// tsc copies no binary files; the sandbox's sample MP4 must sit beside its compiled module.
import { cpSync, mkdirSync } from 'node:fs';

mkdirSync('dist/sandbox/assets', { recursive: true });
cpSync('src/sandbox/assets', 'dist/sandbox/assets', { recursive: true });
