import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { tempDir } from './temp.js';

export const CLI = resolve(import.meta.dirname, '../../dist/cli/main.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  /** Another build of the CLI to run (the crash loop uses a private copy). */
  cli?: string;
}

/** Starts the real CLI as a child process (no TTY: plain output). */
export function spawnCli(
  args: string[],
  options: CliOptions,
): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [options.cli ?? CLI, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const done = new Promise<CliResult>((resolvePromise) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  return spawnCli(args, options).done;
}

/** A fresh folder holding the given files (path -> content), removed when the test file ends. */
export function tempProject(files: Record<string, string>): string {
  const dir = tempDir('mediabatch-test-');
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
  return dir;
}

/** Resolves when `predicate` holds for the text seen so far on the child's stdout. */
export function waitForOutput(
  child: ChildProcess,
  predicate: (text: string) => boolean,
  timeoutMs = 30_000,
): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for output; saw:\n${seen}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (predicate(seen)) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolvePromise(seen);
      }
    };
    child.stdout!.on('data', onData);
  });
}
