import { spawn } from 'node:child_process';
import { parse } from 'shell-quote';

/**
 * `--on-complete CMD`: the words of CMD as POSIX shell quoting reads them (spaces separate words,
 * '...' and "..." quote, a backslash escapes the next character), with nothing else of a shell:
 * no $VARIABLE, no glob, no pipe or redirection. The program is started directly, never through
 * a shell; a person who wants one writes it: `sh -c 'notify-send "$MEDIABATCH_SUMMARY"'`.
 */
export function parseCommand(text: string): { argv: string[] } | { problem: string } {
  // A variable is not expanded (it stays `$NAME`): expanding it is the job of a shell, asked for or not at all.
  const words = parse(text, (name) => `$${name}`);
  const argv: string[] = [];
  for (const word of words) {
    if (typeof word === 'string') argv.push(word);
    else if ('pattern' in word) argv.push(word.pattern);
    else if ('comment' in word) break;
    else
      return {
        problem: `"${word.op}" is shell syntax, and no shell runs the command; to use a shell, write sh -c '...'`,
      };
  }
  if (argv.length === 0) return { problem: 'names no program to run' };
  return { argv };
}

export type HookResult =
  | { kind: 'exited'; code: number }
  | { kind: 'signal'; signal: string }
  | { kind: 'not_started'; reason: string };

/**
 * Runs the command once: the summary as JSON on its stdin, `env` as its whole environment, its
 * output on our stderr (our stdout may carry --json's document). Resolves when it ends; never throws.
 */
export function runHook(
  argv: readonly string[],
  env: Record<string, string>,
  stdin: string,
  output: NodeJS.WritableStream,
): Promise<HookResult> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'], shell: false });
    child.stdout.pipe(output, { end: false });
    child.stderr.pipe(output, { end: false });
    // A command that reads no input closes its stdin early: that is not its failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
    child.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ kind: 'not_started', reason: error.code ?? error.message }),
    );
    child.on('close', (code, signal) =>
      resolve(code === null ? { kind: 'signal', signal: signal ?? 'unknown' } : { kind: 'exited', code }),
    );
  });
}
