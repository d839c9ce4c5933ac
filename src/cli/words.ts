import type { Fields } from '../errors.js';
import type { Warning } from '../index.js';
import { commandLine } from './batch-options.js';
import { FLAGS } from './flags.js';
import type { CliIo } from './io.js';

/**
 * The CLI's words for what the library says (an error, a warning, a notice, a run's log line):
 * the library names an option by its API name in backticks (`redo`, `baseUrl`), the CLI by its
 * flag (--redo, --base-url). WORDS holds the codes whose CLI words need more of the fields.
 */
const RENAMED: Record<string, string> = {
  to: 'html',
  urlLifetimeSeconds: 'url-lifetime',
  sinceHours: 'since',
};
const FLAG_NAMES = new Set<string>(FLAGS.map((flag) => flag.name));

const WORDS: Record<string, (fields: Fields, message: string) => string> = {
  /** The command that rebuilds the ledger, as the user would type it. */
  ledger_lost: ({ next }, message) => {
    const { manifest, ledger, baseUrl } = next as { manifest: string; ledger?: string; baseUrl?: string };
    return message.replace('`importJobs`', commandLine('import', manifest, { ledger, 'base-url': baseUrl }));
  },
  target_refused: (fields, message) => writerWords(fields, message),
  /** A run's or keep's page refused by the door: its refusal's words, in the warning. */
  gallery_not_written: (fields, message) => writerWords(fields, message),
};

/** The call that would have written, as the command and flag that name its path. */
function writerWords({ call }: Fields, message: string): string {
  const writer = typeof call === 'string' ? WRITERS[call] : undefined;
  return (writer === undefined ? message : message.replaceAll(`\`${String(call)}\``, writer))
    .replace('a gallery never goes over it', 'report --html never writes over it')
    .replace('leave `to` out', 'leave FILE out');
}

/** Each call that writes at a path a person names (batch/named-files/named-target.ts), as the CLI names it. */
const WRITERS: Record<string, string> = {
  writePlan: 'plan --out',
  writeExport: 'export --out',
  exportKept: 'export --kept --out',
  exportRejected: 'export --rejected --out',
  writeGallery: 'report --html',
  audit: 'audit --out',
  copyLedger: 'copy-ledger --to',
};

/** The option's flag, `--base-url` for `baseUrl`; null for a word that names no flag. */
function flagOf(option: string): string | null {
  const name = RENAMED[option] ?? option.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
  return FLAG_NAMES.has(name) ? `--${name}` : null;
}

/** What the library said (a refusal, a warning, a document's text), in the CLI's words. */
export function cliWords(
  given: { code?: string; message: string; fields?: Fields | undefined } | string,
): string {
  const said = typeof given === 'string' ? { message: given } : given;
  const entry = said.code === undefined ? undefined : WORDS[said.code];
  const message = entry ? entry(said.fields ?? {}, said.message) : said.message;
  return message.replace(/`(\w+)`/g, (all, option: string) => flagOf(option) ?? all);
}

/** A warning of the library, on stderr under the command's name. */
export function warnOn(io: Pick<CliIo, 'stderr'>, command: string): (warning: Warning) => void {
  return (warning) =>
    io.stderr.write(
      `mediabatch ${command}: ${warning.code === 'output_unclaimed' ? 'warning: ' : ''}${cliWords(warning)}\n`,
    );
}
