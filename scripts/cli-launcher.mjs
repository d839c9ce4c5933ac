#!/usr/bin/env node
// The command's first file (dist/cli/main.js, written by scripts/bundle-cli.mjs): it runs the
// bundled command, dist/cli/main.cjs, through V8's code cache. Compiling the 4.5 MB bundle was most
// of every command's start (about 0.4 s of CPU); the cache, made at build time by one `--help`,
// holds what V8 compiled then, so a command starts with that work done. A cache that does not fit
// this Node (another version, other flags) is rejected by V8 and the bundle is compiled as before.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

const folder = dirname(fileURLToPath(import.meta.url));
const bundle = join(folder, 'main.cjs');
const cacheFile = join(folder, 'main.cjs.cache');

function readCache() {
  try {
    return readFileSync(cacheFile);
  } catch {
    return undefined;
  }
}

// The bundle starts with its own `#!` line, which is no JavaScript inside a function's body.
const source = readFileSync(bundle, 'utf8').replace(/^#!.*/, '');
const script = new Script(Module.wrap(source), {
  filename: bundle,
  cachedData: readCache(),
});
// Only the build asks for the cache (scripts/bundle-cli.mjs); a command never writes into its own
// installation.
if (process.env.MEDIABATCH_BUILD_CODE_CACHE === '1')
  process.once('exit', () => {
    writeFileSync(`${cacheFile}.tmp`, script.createCachedData());
    renameSync(`${cacheFile}.tmp`, cacheFile);
  });
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, folder);
