import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GALLERY_MARKER } from '../../../src/documents/gallery/page.js';
import { runCli } from '../../support/cli.js';
import type { E2eProject } from '../../support/e2e.js';
import { doorProject, PROTECTED_FILES, treeHashes } from '../../support/named-files.js';

/**
 * The door for named files (docs/results.md) for the other commands that write where a person
 * says: `audit --out` (a folder), `copy-ledger --to` (a SQLite file) and `report --html`. The same
 * protected files as plan's and export's (named-target.test.ts), refused with exit 2 and words that
 * name them, every file of the project unchanged.
 */

const cli = (p: E2eProject, args: string[]) => runCli(args, { cwd: p.dir });
/** A test of a dozen commands or more, each a process of its own: slow on a loaded two-core machine. */
const MANY_COMMANDS = 120_000;
const OUTPUT = 'out/sandbox/door';
const IN_OUTPUT = `is in ${OUTPUT}, the output folder of the batch door`;

/** Runs each refusal and checks its exit code, its words and that nothing changed. */
async function expectRefusals(
  p: E2eProject,
  cases: ReadonlyArray<readonly [string[], string]>,
): Promise<void> {
  const before = treeHashes(p.dir);
  for (const [args, stderr] of cases) {
    const refused = await cli(p, args);
    expect([refused.code, refused.stdout, refused.stderr], args.join(' ')).toEqual([2, '', stderr]);
    expect(treeHashes(p.dir), args.join(' ')).toEqual(before);
  }
}

describe('audit --out: a dispute bundle goes into a new or empty folder, or over its own with --force', () => {
  it(
    'refuses every protected file and the output folder, even with --force',
    async () => {
      const p = await doorProject();
      const audit = (to: string, ...more: string[]) => [
        'audit',
        p.manifest,
        '--sandbox',
        '--out',
        to,
        ...more,
      ];
      const never = 'audit --out never writes';
      await expectRefusals(p, [
        ...PROTECTED_FILES.map(([file, what]) => {
          const owned = file.startsWith(`${OUTPUT}/`);
          const words = owned
            ? `${file} ${IN_OUTPUT}; ${never} there, not even with --force. Nothing was written; name a folder outside it`
            : `${file} is ${what}; ${never} over it, not even with --force. Nothing was written; name a folder`;
          return [audit(file, '--force'), `mediabatch audit: ${words}\n`] as const;
        }),
        [
          audit(OUTPUT, '--force'),
          `mediabatch audit: ${OUTPUT} is the output folder of the batch door; ${never} there, not even with --force. Nothing was written; name another folder\n`,
        ],
        [
          audit('notes.txt', '--force'),
          'mediabatch audit: notes.txt is a file; a dispute bundle goes into a new or empty folder. Nothing was written; name a folder\n',
        ],
      ]);
    },
    MANY_COMMANDS,
  );

  it(
    'writes a new bundle, replaces it only with --force, and never mixes it into a folder of other files',
    async () => {
      const p = await doorProject();
      const audit = (to: string, ...more: string[]) =>
        cli(p, ['audit', p.manifest, '--sandbox', '--out', to, ...more]);
      const first = await audit('dispute');
      expect(first.code, first.stderr).toBe(0);
      const auditedAt = () =>
        (JSON.parse(readFileSync(join(p.dir, 'dispute', 'audit.json'), 'utf8')) as { audited_at: string })
          .audited_at;
      const earlier = auditedAt();
      mkdirSync(join(p.dir, 'mine'));
      writeFileSync(join(p.dir, 'mine', 'problems.csv'), 'my own table\n');
      const args = (to: string, ...more: string[]) => [
        'audit',
        p.manifest,
        '--sandbox',
        '--out',
        to,
        ...more,
      ];
      await expectRefusals(p, [
        [
          args('dispute'),
          'mediabatch audit: dispute holds a dispute bundle that audit --out wrote before; nothing was written. ' +
            'Name a new or empty folder, or add --force to replace it\n',
        ],
        [
          args('mine', '--force'),
          'mediabatch audit: mine is a folder that is not empty and holds nothing audit --out wrote; nothing was written. ' +
            'Name a new or empty folder\n',
        ],
      ]);
      const forced = await audit('dispute', '--force');
      expect(forced.code, forced.stderr).toBe(0);
      expect(auditedAt()).not.toBe(earlier);
      // Written beside it and renamed in: nothing of the earlier bundle or the new one's making is left.
      expect(readdirSync(p.dir).filter((name) => name.includes('dispute'))).toEqual(['dispute']);
      expect(readFileSync(join(p.dir, 'mine', 'problems.csv'), 'utf8')).toBe('my own table\n');
    },
    MANY_COMMANDS,
  );
});

describe('copy-ledger --to: a new file or a SQLite ledger, never a protected one', () => {
  it(
    'refuses every protected file, a file of yours and a new name in the output folder; copies into a new file',
    async () => {
      const p = await doorProject();
      const copy = (to: string) => ['copy-ledger', p.manifest, '--ledger', p.ledger, '--to', to];
      const never = 'copy-ledger --to never writes';
      await expectRefusals(p, [
        // The ledger copied from is refused by copy-ledger's own check (copy-ledger.test.ts), named so.
        ...PROTECTED_FILES.filter(([file]) => !file.endsWith('door.sqlite')).map(
          ([file, what]) =>
            [
              copy(file),
              `mediabatch copy-ledger: ${file} is ${what}; ${never} over it. Nothing was written; name another file\n`,
            ] as const,
        ),
        [
          copy('notes.txt'),
          'mediabatch copy-ledger: notes.txt exists and is not a SQLite ledger; nothing was written. ' +
            'Name a new file or a SQLite ledger that holds none of the batch\n',
        ],
        [
          copy(`${OUTPUT}/copy.sqlite`),
          `mediabatch copy-ledger: ${OUTPUT}/copy.sqlite ${IN_OUTPUT}; ${never} there. Nothing was written; name a file outside it\n`,
        ],
      ]);
      const copied = await cli(p, copy('copy.sqlite'));
      expect(copied.code, copied.stderr).toBe(0);
      expect(readFileSync(join(p.dir, 'copy.sqlite')).subarray(0, 16).toString('latin1')).toBe(
        'SQLite format 3\u0000',
      );
    },
    MANY_COMMANDS,
  );
});

describe('report --html: the gallery goes through the same door', () => {
  it(
    'refuses every protected file, even with --force, and a name in the output folder that is not a page',
    async () => {
      const p = await doorProject();
      const report = (to: string, ...more: string[]) => [
        'report',
        p.manifest,
        '--sandbox',
        '--html',
        to,
        ...more,
      ];
      const never = 'report --html never writes';
      await expectRefusals(p, [
        ...PROTECTED_FILES.map(
          ([file, what]) =>
            [
              report(file, '--force'),
              `mediabatch report: ${file} is ${what}; ${never} over it, not even with --force. Nothing was written; name another file\n`,
            ] as const,
        ),
        [
          report(`${OUTPUT}/review.txt`, '--force'),
          `mediabatch report: ${OUTPUT}/review.txt ${IN_OUTPUT}; ${never} there, not even with --force. Nothing was written; name a file outside it\n`,
        ],
      ]);
      // A page of its own in its own output folder, at a .html name: written.
      const page = await cli(p, report(`${OUTPUT}/review.html`));
      expect(page.code, page.stderr).toBe(0);
      expect(readFileSync(join(p.dir, OUTPUT, 'review.html'), 'utf8')).toContain(GALLERY_MARKER);
      expect(existsSync(join(p.dir, OUTPUT, 'review.txt'))).toBe(false);
    },
    MANY_COMMANDS,
  );
});
