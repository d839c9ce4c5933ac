import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { GALLERY_MARKER } from '../../../src/documents/gallery/page.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  type E2eProject,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  sha256File,
  startTestSandbox,
} from '../../support/e2e.js';
import { requestLog } from '../../support/services.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const YAML = `${manifestYaml('gal')}items:\n  - {id: a, prompt: one}\n  - {id: b, prompt: two}\n`;

async function doneProject(): Promise<E2eProject> {
  sandbox = await startTestSandbox();
  const p = project('gal', YAML, { 'notes.txt': 'my own notes\n' });
  onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
  const ran = await runAgainst(sandbox, p);
  expect(ran.code, ran.stderr).toBe(0);
  return p;
}

const report = (p: E2eProject, ...args: string[]) => runCli(['report', p.manifest, ...args], { cwd: p.dir });
const ledgerState = (p: E2eProject) =>
  ledgerRows(p, 'SELECT item_id, state, request_hash FROM items ORDER BY item_id');

describe('report --html writes only a new file or a gallery it wrote', () => {
  it('refuses the manifest, the ledger and a saved output, even with --force', async () => {
    const p = await doneProject();
    const guarded = [
      ['batch.yaml', 'the manifest'],
      ['.mediabatch/gal.sqlite', 'the ledger'],
      ['out/gal/a.mp4', 'a saved output'],
      ['out/gal/a.json', "a saved output's provenance sidecar"],
    ] as const;
    const before = guarded.map(([file]) => sha256File(join(p.dir, file)));
    const state = ledgerState(p);
    const requests = requestLog(sandbox).length;
    for (const force of [[], ['--force']]) {
      for (const [file, what] of guarded) {
        const result = await report(p, '--html', file, ...force);
        expect(result.code, `${file} ${force}`).toBe(2);
        expect(result.stdout).toBe('');
        expect(result.stderr).toBe(
          `mediabatch report: ${file} is ${what}; report --html never writes over it, not even with --force. Nothing was written; name another file\n`,
        );
      }
    }
    expect(guarded.map(([file]) => sha256File(join(p.dir, file)))).toEqual(before);
    expect(ledgerState(p)).toEqual(state);
    expect(requestLog(sandbox)).toHaveLength(requests); // report never contacts the service
  });

  it("refuses someone else's file unless --force, and rewrites its own gallery", async () => {
    const p = await doneProject();
    const notes = join(p.dir, 'notes.txt');
    const theirs = sha256File(notes);

    const refused = await report(p, '--html', 'notes.txt');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'mediabatch report: notes.txt exists and is not a gallery page mediabatch wrote; nothing was written. ' +
        'Name a new file (or leave FILE out for <output dir>/index.html), or add --force to replace it\n',
    );
    expect(sha256File(notes)).toBe(theirs);

    // A new file, then the same file again: the second time it is recognised as a gallery.
    const first = await report(p, '--html', 'review.html');
    expect(first.code, first.stderr).toBe(0);
    expect(readFileSync(join(p.dir, 'review.html'), 'utf8')).toContain(GALLERY_MARKER);
    const again = await report(p, '--html', 'review.html');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(`wrote the gallery of gal (2 items) to ${join(p.dir, 'review.html')}\n`);

    const forced = await report(p, '--html', 'notes.txt', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(notes, 'utf8')).toContain(GALLERY_MARKER);
  });

  it("plan lists neither the gallery's own index.html nor the owner marker as stray files", async () => {
    const p = await doneProject();
    expect((await report(p, '--html')).code).toBe(0);
    expect(readFileSync(join(p.outDir, 'index.html'), 'utf8')).toContain(GALLERY_MARKER);
    writeFileSync(join(p.outDir, 'notes.txt'), 'a file of my own\n');

    const plan = await runCli(['plan', p.manifest], { cwd: p.dir });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).not.toContain('index.html');
    expect(plan.stdout).toContain(
      'files in the output folder this ledger did not write (left as they are; run never overwrites them):\n  ? out/gal/notes.txt (no sidecar beside it names the job that made it)\n',
    );
    const json = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    expect((JSON.parse(json.stdout) as { stray_files: string[] }).stray_files).toEqual(['out/gal/notes.txt']);
  });
});
