import { resolve } from 'node:path';
import {
  loadDefinition,
  loadManifest,
  type Manifest,
  ManifestError,
  openManifest,
  type StreamedManifest,
  UserError,
} from '../index.js';
import { withoutPassword } from '../without-password.js';
import { type CommandName, commandSpec } from './command-table.js';
import type { CliIo } from './io.js';

/**
 * The flags that name a batch: its ledger, the sandbox, the service; or, in place of the manifest,
 * a shared batch by its name and where its output folder is here.
 */
type BatchFlags = {
  ledger?: string | undefined;
  sandbox?: boolean;
  'sandbox-config'?: string | undefined;
  'base-url'?: string | undefined;
  batch?: string | undefined;
  'output-dir'?: string | undefined;
};

/**
 * The batch a command names, as it hands it to the package root: the manifest (a broken one, or a
 * shared batch's definition that cannot be read, refused with what it leaves undone for this
 * command, command-table.ts) and the options the library resolves the batch from once, the flags
 * that name it and the process's folder and environment.
 */
export async function openBatch(
  { values, positionals }: { values: BatchFlags; positionals: string[] },
  io: Pick<CliIo, 'cwd' | 'env'>,
  command: CommandName,
): Promise<{ manifestArg: string | undefined; manifest: Manifest; options: BatchCallOptions }> {
  const opened = await openBatchOf({ values, positionals }, io, command, false);
  return { ...opened, manifest: opened.manifest as Manifest };
}

/**
 * openBatch for a command that reads a batch too large to hold (docs/api.md): the manifest is
 * opened to be read a chunk at a time where it can be; its problems are found as the library
 * reads it (refusedManifest words them as openBatch does).
 */
export function openStreamedBatch(
  flags: { values: BatchFlags; positionals: string[] },
  io: Pick<CliIo, 'cwd' | 'env'>,
  command: CommandName,
) {
  return openBatchOf(flags, io, command, true);
}

/** The options openBatch hands the package root with the manifest. */
type BatchCallOptions = {
  manifestArg?: string;
  cwd: string;
  env: Record<string, string | undefined>;
  ledger?: string;
  sandbox?: boolean;
  sandboxConfig?: string;
  baseUrl?: string;
};

async function openBatchOf(
  { values, positionals }: { values: BatchFlags; positionals: string[] },
  io: Pick<CliIo, 'cwd' | 'env'>,
  command: CommandName,
  streamed: boolean,
): Promise<{
  manifestArg: string | undefined;
  manifest: Manifest | StreamedManifest;
  options: BatchCallOptions;
}> {
  const outcome = commandSpec(command)!.undone;
  // With --batch every positional is the command's own (keep's entries): none names a manifest.
  const manifestArg = values.batch === undefined ? positionals[0] : undefined;
  const options = {
    ...(manifestArg === undefined ? {} : { manifestArg }),
    cwd: io.cwd,
    env: { ...io.env },
    ...(values.ledger === undefined ? {} : { ledger: values.ledger }),
    ...(values.sandbox ? { sandbox: true } : {}),
    ...(values['sandbox-config'] === undefined ? {} : { sandboxConfig: values['sandbox-config'] }),
    ...(values['base-url'] === undefined ? {} : { baseUrl: values['base-url'] }),
  };
  if (manifestArg === undefined)
    return { manifestArg, manifest: await definedBatch(values, io, outcome), options };
  if (values['output-dir'] !== undefined)
    throw new UserError(
      "--output-dir goes with --batch, for a runner without the manifest: a manifest's output.dir says where its files go",
    );
  return { manifestArg, manifest: manifestFor(manifestArg, io, outcome, streamed), options };
}

/**
 * `--batch NAME`: the shared batch's current definition, from its ledger alone
 * (docs/shared-ledger.md); a refusal says what the command leaves undone.
 */
async function definedBatch(values: BatchFlags, io: Pick<CliIo, 'cwd' | 'env'>, outcome: string) {
  try {
    return await loadDefinition({
      batch: values.batch!,
      cwd: io.cwd,
      env: { ...io.env },
      ...(values.ledger === undefined ? {} : { ledger: values.ledger }),
      ...(values['output-dir'] === undefined ? {} : { outputDir: values['output-dir'] }),
    });
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    throw new UserError(`${error.message}; ${outcome}`, error.code, error.fields);
  }
}

/**
 * The manifest, or every problem in it, file:line:column first (exit 2); `outcome` says what that
 * means for this command (only `run` and `import` could have submitted anything). The parser has
 * made sure the path is there.
 */
function manifestFor(
  path: string,
  io: Pick<CliIo, 'cwd'>,
  outcome: string,
  streamed: boolean,
): Manifest | StreamedManifest {
  try {
    const file = resolve(io.cwd, path);
    return streamed ? openManifest(file) : loadManifest(file);
  } catch (error) {
    throw refusedManifest(error, outcome);
  }
}

/** Every problem in the manifest, file:line:column first, with what the command leaves undone; any other error as it is. */
function refusedManifest(error: unknown, outcome: string): unknown {
  if (!(error instanceof ManifestError)) return error;
  const count = error.problems.length;
  return new UserError(
    `${count} problem${count === 1 ? '' : 's'} in the manifest; ${outcome}:\n${error.lines}`,
    error.code,
    error.fields,
  );
}

/**
 * A library call on a streamed manifest, whose problems are found as the call reads it: worded as
 * openBatch words a manifest's problems (with what `command` leaves undone).
 */
export async function withManifestWords<T>(command: CommandName, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw refusedManifest(error, commandSpec(command)!.undone);
  }
}

/**
 * A mediabatch command as the user would type it again: the manifest as they named it and the
 * flags that pick the same batch. Quoted only where a shell would need it. The one builder of
 * "the command to run next" that every command's words use.
 */
export function commandLine(command: string, manifestArg: string | undefined, values: BatchFlags): string {
  const quote = (word: string) =>
    /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
  const named =
    manifestArg === undefined
      ? [...flag('--batch', values.batch), ...flag('--output-dir', values['output-dir'])]
      : [manifestArg];
  const sandbox = values.sandbox ? ['--sandbox'] : [];
  const ledger = flag('--ledger', values.ledger && withoutPassword(values.ledger));
  const baseUrl = flag('--base-url', values['base-url']);
  return ['mediabatch', command, ...named, ...sandbox, ...ledger, ...baseUrl].map(quote).join(' ');
}

const flag = (name: string, value: string | undefined) => (value ? [name, value] : []);
