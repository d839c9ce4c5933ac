import {
  demoSandboxConfig,
  type SandboxConfigInput,
  type SandboxHandle,
  type SandboxProblem,
  startSandbox,
} from '../../sandbox/index.js';
import { sandboxStatePath } from '../resolve/placement.js';
import type { Warn } from '../resolve/warnings.js';

/**
 * --sandbox for `run`, `import`, `forget` and `audit`: the embedded sandbox, its jobs kept in a
 * state file beside the ledger, so it knows what earlier runs made (docs/sandbox-state.md); its
 * settings are the demo's unless the batch names a configuration file (`sandboxConfig`).
 */
export function startEmbeddedSandbox(
  ledgerPath: string,
  warn: Warn,
  config: SandboxConfigInput | null = null,
): Promise<SandboxHandle> {
  return startSandbox(config ?? demoSandboxConfig(), {
    statePath: sandboxStatePath(ledgerPath),
    // Its problems reach the caller as warnings: nothing below the CLI writes to the console.
    onProblem: (problem: SandboxProblem) =>
      warn({
        code: 'sandbox_problem',
        message: `the embedded sandbox: ${problem.message}`,
        fields: { kind: problem.kind },
      }),
  });
}
