import { describe, expect, it } from 'vitest';
import {
  exportKept,
  loadManifest,
  UserError,
  writeExport,
  writeGallery,
  writePlan,
} from '../../src/index.js';
import { doorProject, treeHashes } from '../support/named-files.js';

/**
 * The door for named files from the package root (docs/results.md, "The door for named files"):
 * the library functions behind `plan --out`, `export --out` and `report --html` refuse a protected
 * target with `target_refused`, fields that say what it is, words that name options by their API
 * name (`force`, never --force), and nothing written.
 */
describe('the package root refuses a protected target before writing', () => {
  it('writePlan, writeExport, exportKept and writeGallery, with force or not', async () => {
    const p = await doorProject();
    const manifest = loadManifest(p.manifest);
    const at = { sandbox: true, cwd: p.dir, env: {} };
    const before = treeHashes(p.dir);
    const cases = [
      [
        'writePlan',
        () => writePlan(manifest, { ...at, to: '.mediabatch/sandbox/door.sqlite' }),
        'ledger',
        'the ledger',
      ],
      [
        'writeExport',
        () => writeExport(manifest, { ...at, to: 'out/sandbox/door/sea.json', force: true }),
        'sidecar',
        "a saved output's provenance sidecar",
      ],
      [
        'exportKept',
        () => exportKept(manifest, { ...at, to: 'items.csv', force: true }),
        'items_from',
        "the manifest's items_from file",
      ],
      [
        'writeGallery',
        () => writeGallery(manifest, { ...at, to: 'ledger-link.sqlite', force: true }),
        'ledger',
        'the ledger',
      ],
    ] as const;
    for (const [call, action, reason, what] of cases) {
      const error = await action().then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error, call).toBeInstanceOf(UserError);
      const { code, fields, message } = error as UserError;
      expect({ code, fields }, call).toEqual({
        code: 'target_refused',
        fields: { option: 'to', call, target: expect.any(String), reason, guarded: what },
      });
      expect(message, call).toMatch(
        new RegExp(
          `^\\S+ is ${what.replace(/[()]/g, '\\$&')}; \`${call}\` never writes over it, not even with \`force\`\\. Nothing was written; name another file$`,
        ),
      );
      expect(treeHashes(p.dir), call).toEqual(before);
    }
  });
});
