// A build starts from an empty dist/, so a file moved or deleted in src/ never ships from an old build.
import { rmSync } from 'node:fs';

rmSync('dist', { recursive: true, force: true });
