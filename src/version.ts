import { readFileSync } from 'node:fs';

/** mediabatch's own version, from the package.json shipped beside src/ and dist/. */
export const MEDIABATCH_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
