import { dirname, relative } from 'node:path';
import { collectRows } from '../collect-rows.js';
import { isS3Uri, outputChild } from '../manifest/index.js';
import { itemsInTheWay, namesTaken } from '../manifest/taken-names.js';
import type { RunContext } from './run-context.js';

/**
 * Before a run submits anything: the items whose output name is already taken by a file this
 * ledger did not write (another program's, the user's, a batch from before folders had owners)
 * are not submitted, so nothing is paid for that could only land on top of someone else's file.
 * They stay pending, and the run says which file is in the way. Returns their ids. The rule is
 * namesTaken (manifest/taken-names.ts), which `plan` applies to the same items before it prices any.
 */
export async function itemsHeldBack(run: RunContext, itemIds: readonly string[]): Promise<Set<string>> {
  const { ledger, manifest, observer } = run.deps;
  const items = itemIds.flatMap((id) => {
    const tracked = run.state.item(id);
    return tracked ? [tracked.item] : [];
  });
  if (items.length === 0) return new Set();
  const folders = new Set(
    items.map((item) => dirname(outputChild(manifest.outputDir, item.name ?? item.id))),
  );
  const present = await run.deps.store.filesIn([...folders]);
  // Most runs find nothing at their items' names: the ledger's paths are read only when they do.
  if (itemsInTheWay(manifest.outputDir, items, present).size === 0) return new Set();
  const held = namesTaken(manifest.outputDir, items, present, await collectRows(ledger.itemFilePaths()));
  const base = dirname(manifest.file);
  for (const [id, paths] of held) {
    const shown = paths.map((path) => (isS3Uri(path) ? path : relative(base, path))).join(', ');
    observer.log(
      'error',
      `${id}: not submitted: ${shown} is in the way, a file this ledger did not write, and run never ` +
        'overwrites one; move it elsewhere (or set another output.dir), then run again',
    );
  }
  return new Set(held.keys());
}
