import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import type { E2eProject } from '../../support/e2e.js';
import { doorProject, PROTECTED_FILES, treeHashes } from '../../support/named-files.js';

/**
 * The door for named files (docs/results.md): `plan --out` and `export --out`, the built CLI
 * against the embedded sandbox, never write over what they did not make. Each refusal is exit 2,
 * its words name what the file is, and every file of the project keeps its SHA-256 (nothing is
 * written, moved or left behind), with and without --force.
 */

type Writer = { name: string; args: (p: E2eProject, to: string, ...more: string[]) => string[] };

const WRITERS: Writer[] = [
  { name: 'plan', args: (p, to, ...more) => ['plan', p.manifest, '--sandbox', '--out', to, ...more] },
  { name: 'export', args: (p, to, ...more) => ['export', p.manifest, '--sandbox', '--out', to, ...more] },
];

const cli = (p: E2eProject, args: string[]) => runCli(args, { cwd: p.dir });
/** A test of a dozen commands or more, each a process of its own: slow on a loaded two-core machine. */
const MANY_COMMANDS = 120_000;

describe.each(WRITERS)('$name --out goes through the door for named files', ({ name, args }) => {
  it(
    'refuses every protected file, even with --force, and writes nothing',
    async () => {
      const p = await doorProject();
      const before = treeHashes(p.dir);
      for (const force of [[], ['--force']])
        for (const [file, what] of PROTECTED_FILES) {
          const refused = await cli(p, args(p, file, ...force));
          expect([refused.code, refused.stdout, refused.stderr], `${file} ${force}`).toEqual([
            2,
            '',
            `mediabatch ${name}: ${file} is ${what}; ${name} --out never writes over it, not even with --force. ` +
              'Nothing was written; name another file\n',
          ]);
          expect(treeHashes(p.dir), `${file} ${force}`).toEqual(before);
        }
    },
    MANY_COMMANDS,
  );

  it('refuses a new name in the owned output folder, and a folder', async () => {
    const p = await doorProject();
    const before = treeHashes(p.dir);
    const inside = await cli(p, args(p, 'out/sandbox/door/notes.json', '--force'));
    expect([inside.code, inside.stderr]).toEqual([
      2,
      `mediabatch ${name}: out/sandbox/door/notes.json is in out/sandbox/door, the output folder of the batch door; ` +
        `${name} --out never writes there, not even with --force. Nothing was written; name a file outside it\n`,
    ]);
    mkdirSync(join(p.dir, 'reports'));
    const folder = await cli(p, args(p, 'reports'));
    expect([folder.code, folder.stderr]).toEqual([
      2,
      `mediabatch ${name}: reports is a folder; name a file for the ${name === 'plan' ? 'approved plan' : 'export'}. Nothing was written\n`,
    ]);
    expect(treeHashes(p.dir)).toEqual(before);
  });

  it('writes a new file, replaces its own without --force, and a file of yours only with --force', async () => {
    const p = await doorProject();
    const target = join(p.dir, 'result.out');
    const first = await cli(p, args(p, 'result.out'));
    expect(first.code, first.stderr).toBe(0);
    const written = readFileSync(target, 'utf8');
    expect(written).toMatch(name === 'plan' ? /^\{\n {2}"format": "mediabatch-plan\/1"/ : /^\{"id":"sea",/);
    // Its own kind, recognised by its first bytes: replaced without --force.
    writeFileSync(target, written.replace('"sea"', '"sea" '));
    const again = await cli(p, args(p, 'result.out'));
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe(written);

    const notes = join(p.dir, 'notes.txt');
    const before = treeHashes(p.dir);
    const refused = await cli(p, args(p, 'notes.txt'));
    const kind = name === 'plan' ? 'an approved plan' : 'an export';
    expect([refused.code, refused.stderr]).toEqual([
      2,
      `mediabatch ${name}: notes.txt exists and is not ${kind} mediabatch wrote; nothing was written. ` +
        'Name a new file, or add --force to replace it\n',
    ]);
    expect(treeHashes(p.dir)).toEqual(before);
    const forced = await cli(p, args(p, 'notes.txt', '--force'));
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(notes, 'utf8')).toBe(written);
  });
});

describe('export --out recognises every export as its own', () => {
  it(
    'replaces JSON Lines with CSV and back, --kept or not, and an empty export, without --force',
    async () => {
      const p = await doorProject();
      const exportTo = (...more: string[]) =>
        cli(p, ['export', p.manifest, '--sandbox', '--out', 'x', ...more]);
      const steps = [
        [],
        ['--format', 'csv'],
        ['--kept'],
        ['--kept', '--format', 'csv'],
        ['--state', 'failed'],
        [],
      ];
      const firstLines: string[] = [];
      for (const step of steps) {
        const result = await exportTo(...step);
        expect(result.code, `${step} ${result.stderr}`).toBe(0);
        firstLines.push(readFileSync(join(p.dir, 'x'), 'utf8').split('\n')[0]!.slice(0, 12));
      }
      expect(firstLines).toEqual([
        '{"id":"sea",',
        'id,state,pro',
        '{"id":"sea",',
        'id,item,vari',
        '',
        '{"id":"sea",',
      ]);
    },
    MANY_COMMANDS,
  );
});
