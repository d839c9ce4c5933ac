import { demoSandboxConfig, type SandboxHandle, startSandbox } from '../sandbox/index.js';
import { sandboxStatePath } from './placement.js';

/**
 * --sandbox for `run`, `import` and `forget`: the embedded sandbox, its jobs kept in a state file
 * beside the ledger, so it knows what earlier runs made (docs/sandbox-state.md).
 */
export function startEmbeddedSandbox(ledgerPath: string): Promise<SandboxHandle> {
  return startSandbox(demoSandboxConfig(), { statePath: sandboxStatePath(ledgerPath) });
}
