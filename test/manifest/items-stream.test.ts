import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { manifestItems } from '../../src/batch/resolve/load-manifest.js';
import { ManifestError } from '../../src/errors.js';
import {
  loadManifest,
  type ManifestItem,
  NotStreamable,
  readManifestText,
} from '../../src/manifest/index.js';
import { decodeUtf8 } from '../../src/manifest/load.js';
import { ManifestRead, streamManifestChunks } from '../../src/manifest/manifest-stream.js';
import { InvalidUtf8Error, strictUtf8Text } from '../../src/manifest/utf8-stream.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const scratch = mkdtempSync(join(tmpdir(), 'mediabatch-items-stream-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * The streamed reader's manifest (its settings, items and warnings) and problems, or 'whole' where
 * it hands the manifest back.
 */
async function streamed(file: string, chunkSize?: number) {
  const text = readManifestText(file);
  if (!('text' in text)) return text;
  const read = new ManifestRead();
  const items: ManifestItem[] = [];
  try {
    for await (const chunk of streamManifestChunks(file, text.text, read, chunkSize)) items.push(...chunk);
  } catch (error) {
    if (error instanceof NotStreamable) return 'whole' as const;
    throw error;
  }
  if (read.problems.size > 0) return { ok: false, problems: read.problems.sorted() };
  expect(read.count).toBe(items.length);
  return { ok: true, manifest: { ...read.head, items, warnings: read.warnings() } };
}

function whole(file: string) {
  const result = loadManifest(file);
  return result.ok ? { ok: true, manifest: result.manifest } : { ok: false, problems: result.problems };
}

/** The items of a result, for the properties that look at them. */
const itemsOf = (result: Awaited<ReturnType<typeof streamed>> | ReturnType<typeof whole>) =>
  result === 'whole' || !result.ok ? undefined : result.manifest!.items;

describe('the streamed reader of a manifest', () => {
  for (const kind of ['good', 'bad']) {
    const dir = join(fixtures, kind);
    for (const name of readdirSync(dir).filter((n) => /\.yaml(\.txt)?$/.test(n)))
      it(`${kind}/${name}: the same items, or the same problems at the same places, as the whole reader`, async () => {
        const file = join(dir, name);
        const result = await streamed(file, 2);
        if (result !== 'whole') expect(result).toEqual(whole(file));
      });
  }

  it('streams the items_from fixtures rather than handing them back whole', async () => {
    for (const name of ['good/jsonl.yaml', 'bad/csv-bad-rows.yaml', 'bad/jsonl-bad-lines.yaml'])
      expect(await streamed(join(fixtures, name)), name).not.toBe('whole');
  });

  // Ids from a tiny alphabet in both cases, lines without an id (their ids derived from content,
  // some the same), blank and broken lines, mixed line breaks: chunks of 1 to 3 items cross every
  // clash between chunks, in both orders.
  const line = fc.oneof(
    fc.record({ id: fc.constantFrom('a', 'A', 'b', 'c', 'c.1'), prompt: fc.constantFrom('p', 'q') }),
    // Warnings counted across chunks: an input field mediabatch does not know, a variable used or not.
    fc.record({
      prompt: fc.constantFrom('p {a}', 'q'),
      input: fc.constantFrom({ mood: 'calm' }, { tone: 1, mood: 'x' }, {}),
    }),
    fc.record({ prompt: fc.constantFrom('p', 'q', 'r') }),
    fc.record({ id: fc.constantFrom('a', 'd'), prompt: fc.constant(''), seconds: fc.constant(3) }),
  );
  const text = fc.array(
    fc.oneof(
      { weight: 8, arbitrary: line.map((value) => JSON.stringify(value)) },
      {
        weight: 1,
        arbitrary: fc.constantFrom('', '  ', '{"prompt": ', '[1]', ' {"prompt":"x","prompt":"y"}'),
      },
    ),
    { maxLength: 12 },
  );
  const breaks = fc.array(fc.constantFrom('\n', '\r\n', '\r'), { minLength: 12, maxLength: 12 });

  const head = fc.constantFrom('', 'vars: {a: one, unused: two}\n', 'input: {mood: calm}\n');

  it('gives what the whole reader gives, problems located by file, line, column and field, warnings counted across chunks (property)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        text,
        breaks,
        fc.integer({ min: 1, max: 3 }),
        head,
        async (lines, ends, chunkSize, top) => {
          const dir = join(scratch, `p${n++}`);
          writeFileSync(`${dir}.jsonl`, lines.map((l, i) => l + ends[i]).join(''));
          writeFileSync(`${dir}.yaml`, `version: 1\nname: prop\n${top}items_from: p${n - 1}.jsonl\n`);
          const result = await streamed(`${dir}.yaml`, chunkSize);
          expect(result).toEqual(whole(`${dir}.yaml`));
          if (result !== 'whole' && result.ok) {
            const ids = itemsOf(result)!.map((item) => item.id.toLowerCase());
            expect(new Set(ids).size).toBe(ids.length);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('refuses a bad byte at the line and column the whole reader names, however the bytes are split (property)', async () => {
    const bytes = fc.array(
      fc.oneof(
        fc.constantFrom(
          0x0a,
          0x41,
          0xc3,
          0xa9,
          0xe2,
          0x82,
          0xac,
          0xf0,
          0x9f,
          0x98,
          0x80,
          0xff,
          0xef,
          0xbb,
          0xbf,
        ),
        fc.integer({ min: 0, max: 255 }),
      ),
      { maxLength: 40 },
    );
    await fc.assert(
      fc.asyncProperty(
        bytes,
        fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 20 }),
        async (raw, cuts) => {
          const all = Uint8Array.from(raw);
          async function* split() {
            let at = 0;
            for (const cut of cuts) {
              yield all.subarray(at, Math.min(all.length, at + cut));
              at = Math.min(all.length, at + cut);
            }
            yield all.subarray(at);
          }
          const expected = decodeUtf8(all);
          let text = '';
          try {
            for await (const piece of strictUtf8Text(split())) text += piece;
          } catch (error) {
            expect(error).toBeInstanceOf(InvalidUtf8Error);
            expect('position' in expected && expected.position).toEqual((error as InvalidUtf8Error).position);
            return;
          }
          expect(expected).toEqual({ text });
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('manifestItems (the library)', () => {
  it('gives a streamed manifest its items in order, and one it cannot stream its items from memory', async () => {
    for (const name of ['good/jsonl.yaml', 'good/spring.yaml']) {
      const file = join(fixtures, name);
      const items: ManifestItem[] = [];
      for await (const item of manifestItems(file)) items.push(item);
      expect(items, name).toEqual(itemsOf(whole(file)));
    }
  });

  it('throws every problem before it gives a single item', async () => {
    const dir = join(scratch, 'late');
    const good = Array.from({ length: 5 }, (_, i) => JSON.stringify({ id: `i${i}`, prompt: 'p' }));
    writeFileSync(`${dir}.jsonl`, [...good, '{"id":"i0","prompt":"again"}'].join('\n'));
    writeFileSync(`${dir}.yaml`, 'version: 1\nname: late\nitems_from: late.jsonl\n');
    const given: ManifestItem[] = [];
    const reading = (async () => {
      for await (const item of manifestItems(`${dir}.yaml`)) given.push(item);
    })();
    await expect(reading).rejects.toBeInstanceOf(ManifestError);
    expect(given).toEqual([]);
    await reading.catch((error: ManifestError) => {
      expect(error.problems.map((p) => [p.line, p.column, p.path])).toEqual([[6, 2, 'items_from[5].id']]);
    });
  });
});
