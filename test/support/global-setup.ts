import { execFileSync } from 'node:child_process';

/** End-to-end tests spawn the built CLI, so every test run starts from a fresh build of src/. */
export default function setup(): void {
  execFileSync('node', ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    stdio: 'inherit',
  });
}
