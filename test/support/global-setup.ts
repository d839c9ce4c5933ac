import { execFileSync } from 'node:child_process';

/**
 * End-to-end tests spawn the built CLI, so every test run starts from a fresh build of src/.
 * MEDIABATCH_TEST_NO_BUILD=1 skips it, for files that need no build (test/ledger runs the
 * sources, its child processes through tsx).
 */
export default function setup(): void {
  if (process.env.MEDIABATCH_TEST_NO_BUILD === '1') return;
  // What `npm run build` does (scripts/build.mjs): from an empty dist/, so no file of an older build
  // is tested or packed (test/e2e/packaging packs this very build).
  execFileSync('node', ['scripts/build.mjs'], { stdio: 'inherit' });
}
