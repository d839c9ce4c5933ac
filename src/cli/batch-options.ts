import { resolve } from 'node:path';
import { ExitCode, loadManifest, type Manifest, ManifestError, UserError } from '../index.js';
import type { CliIo } from './io.js';

/**
 * What every command hands the package root: the flags that name a batch (ledger, sandbox, service)
 * and the process's folder and environment. The library resolves the batch from these once.
 */
export function batchOptions(
  values: { ledger?: string | undefined; sandbox?: boolean; 'base-url'?: string | undefined },
  io: Pick<CliIo, 'cwd' | 'env'>,
  manifestArg: string,
) {
  return {
    manifestArg,
    cwd: io.cwd,
    env: { ...io.env },
    ...(values.ledger === undefined ? {} : { ledger: values.ledger }),
    ...(values.sandbox ? { sandbox: true } : {}),
    ...(values['base-url'] === undefined ? {} : { baseUrl: values['base-url'] }),
  };
}

/**
 * The manifest, or every problem in it, file:line:column first (exit 2); `outcome` says what that
 * means for this command (only `run` and `import` could have submitted anything).
 */
export function manifestFor(
  path: string | undefined,
  io: Pick<CliIo, 'cwd'>,
  outcome = 'nothing was submitted',
): Manifest {
  if (!path) throw new UserError('missing <manifest> argument');
  try {
    return loadManifest(resolve(io.cwd, path));
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    const count = error.problems.length;
    throw new UserError(
      `${count} problem${count === 1 ? '' : 's'} in the manifest; ${outcome}:\n${error.lines}`,
      ExitCode.Usage,
      error.code,
    );
  }
}

/**
 * A mediabatch command as the user would type it again: the manifest as they named it and the
 * flags that pick the same batch. Quoted only where a shell would need it. The one builder of
 * "the command to run next" that every command's words use.
 */
export function commandLine(
  command: string,
  manifestArg: string,
  values: { ledger?: string | undefined; sandbox?: boolean; 'base-url'?: string | undefined },
): string {
  const quote = (word: string) =>
    /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
  const sandbox = values.sandbox ? ['--sandbox'] : [];
  const ledger = values.ledger ? ['--ledger', quote(values.ledger)] : [];
  const baseUrl = values['base-url'] ? ['--base-url', quote(values['base-url'])] : [];
  return ['mediabatch', command, quote(manifestArg), ...sandbox, ...ledger, ...baseUrl].join(' ');
}
