import { describe, expect, it } from 'vitest';
import {
  definitionOf,
  definitionText,
  manifestOfDefinition,
  parseDefinition,
} from '../../src/manifest/definition.js';
import { manifestOf } from '../support/manifest-text.js';

/**
 * A stored definition read back as the manifest a runner without a copy runs
 * (docs/shared-ledger.md, "Adding a machine"): its definition must be the stored one, byte for
 * byte, or the run would be refused as another revision.
 */

const HEAD =
  'version: 1\nname: shots\nbudget_usd: "2.50"\nconcurrency: 3\nretries: 4\nmax_cost_usd: "0.20"\n';
const MANIFESTS: Record<string, string> = {
  'items, variants, vars and a matrix': `${HEAD}input: {seconds: 2}\nmetadata: {team: blue}\noutput: {name: "{matrix.seconds}s/{id}"}\nitems:
  - {id: b, prompt: "a {animal}", vars: {animal: hen}, variants: 2, model: fast, max_cost_usd: "0.10"}
  - {id: a, prompt: "a fox"}
matrix: {seconds: [2, 4]}\n`,
  'an s3:// output without sidecars': `${HEAD}output: {dir: "s3://bucket/renders/shots", sidecars: false}
items:\n  - {id: a, prompt: "a fox"}\n`,
  'the manifest folder itself, no budget':
    'version: 1\nname: here\noutput: {dir: "."}\nitems:\n  - {id: a, prompt: x}\n',
};

describe('manifestOfDefinition', () => {
  for (const [what, text] of Object.entries(MANIFESTS))
    it(`${what}: the manifest rebuilt elsewhere has the very definition stored`, () => {
      const stored = definitionText(definitionOf(manifestOf(text)));
      const rebuilt = manifestOfDefinition(parseDefinition(stored.text), '/mnt/render/project');
      expect(definitionText(definitionOf(rebuilt))).toEqual(stored);
      expect(rebuilt.items.map((item) => item.id)).toEqual(
        parseDefinition(stored.text).items.map((item) => item.id),
      );
    });

  it('reads a relative output.dir against the folder given, and keeps a bucket and sidecars as defined', () => {
    const local = manifestOfDefinition(
      definitionOf(manifestOf(MANIFESTS['items, variants, vars and a matrix']!)),
      '/w',
    );
    expect(local).toMatchObject({
      file: '/w/shots.yaml',
      outputDir: '/w/out/shots',
      budgetMicros: 2_500_000,
    });
    expect(local.sidecars).toBeUndefined();
    const bucket = manifestOfDefinition(
      definitionOf(manifestOf(MANIFESTS['an s3:// output without sidecars']!)),
      '/w',
    );
    expect(bucket).toMatchObject({ outputDir: 's3://bucket/renders/shots', sidecars: false, warnings: [] });
  });
});
