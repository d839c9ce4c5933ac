import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/**
 * A check of your own as a program (docs/checks.md, "Checks of your own"): started directly from
 * its argument list, never through a shell, in the manifest's folder, the take's sidecar JSON on
 * its stdin. What it printed is kept to a bound: a check is asked for a verdict, not a log.
 */

export type CommandRun =
  | { kind: 'exited'; code: number; stdout: string; stderr: string }
  /** It never ran to an answer: not found, not executable, killed at its timeout, or by a signal. */
  | { kind: 'unusable'; reason: string };

/** What is read of a check's output, each stream: its verdict is in the first lines. */
const OUTPUT_LIMIT = 64 * 1024;

export function runCheckCommand(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number; stdin: string },
): Promise<CommandRun> {
  return new Promise((done) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      stdio: 'pipe',
      shell: false,
    });
    const out = { stdout: '', stderr: '' };
    const keep = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      if (out[stream].length < OUTPUT_LIMIT) out[stream] += chunk.toString('utf8');
    };
    child.stdout.on('data', keep('stdout'));
    child.stderr.on('data', keep('stderr'));
    // A check that reads no input closes its stdin early: that is not its failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done({ kind: 'unusable', reason: startFailure(argv[0]!, error) });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut)
        done({
          kind: 'unusable',
          reason: `it did not finish within ${options.timeoutMs / 1000} s (timeout_seconds)`,
        });
      else if (code === null) done({ kind: 'unusable', reason: `it was killed by ${signal ?? 'a signal'}` });
      else done({ kind: 'exited', code, ...out });
    });
  });
}

function startFailure(program: string, error: NodeJS.ErrnoException): string {
  if (error.code === 'ENOENT') return `its program ${program} was not found`;
  if (error.code === 'EACCES') return `its program ${program} may not be run (not executable)`;
  return `its program ${program} could not be started (${error.code ?? error.message})`;
}

/**
 * Why a check's program cannot be started, looked for before anything is sent, as the system would
 * look for it: a path (it has a slash) against the manifest's folder, a bare name on PATH; null
 * when it is there and may be run.
 */
export async function programProblem(
  program: string,
  cwd: string,
  env: Record<string, string>,
): Promise<string | null> {
  const runnable = (path: string) =>
    access(path, constants.X_OK).then(
      () => true,
      () => false,
    );
  if (program.includes('/') || isAbsolute(program)) {
    const path = resolve(cwd, program);
    if (await runnable(path)) return null;
    const exists = await access(path).then(
      () => true,
      () => false,
    );
    return exists
      ? `its program ${program} may not be run (not executable)`
      : `its program ${program} was not found`;
  }
  // The PATH of the batch's environment (settings.ts), the one the check is started with.
  for (const folder of (env.PATH ?? '').split(delimiter))
    if (folder !== '' && (await runnable(join(folder, program)))) return null;
  return `its program ${program} was not found on PATH`;
}
