import { execFileSync } from 'node:child_process';

/**
 * End-to-end tests spawn the built CLI, so every test run starts from a fresh build of src/.
 * MEDIABATCH_TEST_NO_BUILD=1 skips it, for files that need no build (test/ledger runs the
 * sources, its child processes through tsx).
 */
export default function setup(): void {
  if (process.env.MEDIABATCH_TEST_NO_BUILD === '1') return;
  // As `npm run build` does: from an empty dist/, so no file of an older build is tested or packed
  // (test/e2e/packaging packs this very build).
  execFileSync('node', ['scripts/clean-dist.mjs'], { stdio: 'inherit' });
  execFileSync('node', ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    stdio: 'inherit',
  });
  // The ledger's migration files beside the built code (scripts/copy-migrations.mjs).
  execFileSync('node', ['scripts/copy-migrations.mjs'], { stdio: 'inherit' });
  // The command as it ships: one bundled file (scripts/bundle-cli.mjs).
  execFileSync('node', ['scripts/bundle-cli.mjs'], { stdio: 'inherit' });
}
