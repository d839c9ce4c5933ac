export {
  DEMO_API_KEY,
  demoSandboxConfig,
  loadSandboxConfig,
  type SandboxConfig,
  type SandboxConfigInput,
  sandboxConfigSchema,
} from './config.js';
export type { OnSandboxProblem, SandboxProblem } from './server.js';
export { type SandboxHandle, type SandboxOptions, type SandboxRecords, startSandbox } from './start.js';
