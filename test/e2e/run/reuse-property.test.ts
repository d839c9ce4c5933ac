import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadManifest, run } from '../../../src/index.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  type E2eProject,
  ledgerRows,
  manifestYaml,
  project,
  sha256File,
  startTestSandbox,
} from '../../support/e2e.js';

/**
 * The promise as a property (docs/results.md, "A result is found by its request"): whatever the
 * sequence of edits between runs (rename, swap, edit, undo, remove, restore, variants up and down,
 * no redo), the service charged exactly once for each distinct request that ever appeared, and
 * every file the ledger saved is still on disk with its bytes.
 */

const PROMPTS = ['a red boat', 'a blue car', 'a green tree', 'a grey cat'];
const IDS = ['a', 'b', 'c', 'd'];

interface Batch {
  /** id -> prompt, in manifest order. */
  items: Array<[string, string]>;
  variants: number;
}

type Edit =
  | { kind: 'rename'; at: number; to: number }
  | { kind: 'swap'; at: number; with: number }
  | { kind: 'edit'; at: number; prompt: number }
  | { kind: 'remove'; at: number }
  | { kind: 'restore'; id: number; prompt: number }
  | { kind: 'variants'; count: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('rename' as const), at: fc.nat(3), to: fc.nat(3) }),
  fc.record({ kind: fc.constant('swap' as const), at: fc.nat(3), with: fc.nat(3) }),
  fc.record({ kind: fc.constant('edit' as const), at: fc.nat(3), prompt: fc.nat(3) }),
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat(3) }),
  fc.record({ kind: fc.constant('restore' as const), id: fc.nat(3), prompt: fc.nat(3) }),
  fc.record({ kind: fc.constant('variants' as const), count: fc.integer({ min: 1, max: 2 }) }),
);

/** The batch after one edit; an edit that does not apply (no such item, a taken id) leaves it. */
function applyEdit(batch: Batch, change: Edit): Batch {
  const items = batch.items.map(([id, prompt]) => [id, prompt] as [string, string]);
  const ids = new Set(items.map(([id]) => id));
  switch (change.kind) {
    case 'rename': {
      const item = items[change.at % Math.max(1, items.length)];
      if (item && !ids.has(IDS[change.to]!)) item[0] = IDS[change.to]!;
      break;
    }
    case 'swap': {
      const [x, y] = [
        items[change.at % Math.max(1, items.length)],
        items[change.with % Math.max(1, items.length)],
      ];
      if (x && y) [x[1], y[1]] = [y[1], x[1]];
      break;
    }
    case 'edit': {
      const item = items[change.at % Math.max(1, items.length)];
      if (item) item[1] = PROMPTS[change.prompt]!;
      break;
    }
    case 'remove':
      if (items.length > 1) items.splice(change.at % items.length, 1);
      break;
    case 'restore':
      if (!ids.has(IDS[change.id]!)) items.push([IDS[change.id]!, PROMPTS[change.prompt]!]);
      break;
    case 'variants':
      return { items, variants: change.count };
  }
  return { items, variants: batch.variants };
}

const yamlOf = (batch: Batch) =>
  `${manifestYaml('prop', `variants: ${batch.variants}\n`)}items:\n${batch.items
    .map(([id, prompt]) => `  - {id: ${id}, prompt: "${prompt}"}\n`)
    .join('')}`;

/** Each request the batch asks for: its prompt and variant number. */
const requestsOf = (batch: Batch) =>
  batch.items.flatMap(([, prompt]) =>
    Array.from({ length: batch.variants }, (_, index) => `${prompt}#${index + 1}`),
  );

async function runBatch(sandbox: SandboxHandle, p: E2eProject, batch: Batch): Promise<void> {
  writeFileSync(p.manifest, yamlOf(batch));
  const handle = run(loadManifest(p.manifest), {
    baseUrl: sandbox.baseUrl,
    apiKey: sandbox.apiKey,
    pollIntervalSeconds: 0.05,
    gallery: false,
  });
  const result = await handle.result;
  expect(result.outcome).toBe('done');
}

/** What the service charged, net, by request (prompt and variant): the service's own records. */
function chargedByRequest(sandbox: SandboxHandle): Map<string, number> {
  const charged = new Map<string, number>();
  for (const job of sandbox.records().jobs) {
    if (job.amountMicros - job.refundedMicros <= 0) continue;
    const variant = /\.v([0-9]+)$/.exec(String(job.metadata['mediabatch.item']))?.[1] ?? '1';
    const key = `${String(job.input.prompt)}#${variant}`;
    charged.set(key, (charged.get(key) ?? 0) + 1);
  }
  return charged;
}

describe('a paid result is bought once, whatever the edits between runs', () => {
  it('charges each distinct request exactly once and keeps every saved file', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 2, maxLength: 5 }), async (edits) => {
        const sandbox = await startTestSandbox();
        const p = project('prop', '');
        const seen = new Set<string>();
        try {
          let batch: Batch = {
            items: [
              ['a', PROMPTS[0]!],
              ['b', PROMPTS[1]!],
            ],
            variants: 1,
          };
          for (const change of [null, ...edits]) {
            if (change) batch = applyEdit(batch, change);
            for (const request of requestsOf(batch)) seen.add(request);
            await runBatch(sandbox, p, batch);
          }
          const charged = chargedByRequest(sandbox);
          expect([...charged.keys()].sort(), JSON.stringify(edits)).toEqual([...seen].sort());
          expect(
            [...charged.values()].every((count) => count === 1),
            JSON.stringify(edits),
          ).toBe(true);
          for (const file of ledgerRows<{ path: string; sha256: string }>(
            p,
            'SELECT path, sha256 FROM files',
          )) {
            const path = isAbsolute(file.path) ? file.path : join(p.dir, file.path);
            expect(existsSync(path), path).toBe(true);
            expect(sha256File(path), path).toBe(file.sha256);
          }
        } finally {
          await sandbox.close();
          rmSync(p.dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 15, seed: 38 },
    );
  }, 300_000);
});
