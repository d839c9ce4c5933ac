import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ensureSidecars,
  renderSidecar,
  type SidecarFacts,
  sidecarPathFor,
  withCheck,
} from '../../src/downloads/sidecar.js';
import { traceDisk } from '../support/disk-trace.js';
import { tempDir } from '../support/temp.js';

const FACTS: SidecarFacts = {
  version: '0.0.0',
  manifest: 'batch',
  itemId: 'shot',
  take: 1,
  requestBody: '{"input":{"prompt":"a lighthouse"}}',
  jobId: 'job_1',
  amountMicros: 100_000,
  refundedMicros: 0,
  createdAt: '2030-01-01T00:00:00.000Z',
  completedAt: '2030-01-01T00:00:01.000Z',
};

describe('sidecarPathFor', () => {
  it('replaces the extension with .json, or adds it when there is none', () => {
    expect(sidecarPathFor('out/clip.mp4')).toBe('out/clip.json');
    expect(sidecarPathFor('out/clip.take1.mp4')).toBe('out/clip.take1.json');
    expect(sidecarPathFor('out/clip')).toBe('out/clip.json');
  });

  it('does not take a dot in a folder name or a leading dot for an extension', () => {
    expect(sidecarPathFor('out.d/clip')).toBe('out.d/clip.json');
    expect(sidecarPathFor('out.d\\clip')).toBe('out.d\\clip.json');
    expect(sidecarPathFor('out/.clip')).toBe('out/.clip.json');
    expect(sidecarPathFor('.clip')).toBe('.clip.json');
    expect(sidecarPathFor('out/a.mp4')).toBe('out/a.json');
  });
});

describe('renderSidecar', () => {
  const file = { path: '/out/shot.mp4', bytes: 3, sha256: 'ab' };

  it('writes every fact in a fixed order, money as six-decimal strings, ending in a newline', () => {
    const facts = { ...FACTS, amountMicros: 1_500_000, refundedMicros: 250_000 };
    expect(renderSidecar(facts, file)).toBe(
      [
        '{',
        '  "mediabatch_version": "0.0.0",',
        '  "manifest": "batch",',
        '  "item": "shot",',
        '  "take": 1,',
        '  "prompt": "a lighthouse",',
        '  "request": {',
        '    "input": {',
        '      "prompt": "a lighthouse"',
        '    }',
        '  },',
        '  "job_id": "job_1",',
        '  "cost_usd": "1.500000",',
        '  "refunded_usd": "0.250000",',
        '  "created_at": "2030-01-01T00:00:00.000Z",',
        '  "completed_at": "2030-01-01T00:00:01.000Z",',
        '  "file": {',
        '    "bytes": 3,',
        '    "sha256": "ab"',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
  });

  it("a copy says which take it was copied from and when, after its result's times; others say nothing of it", () => {
    const copy = { ...FACTS, copied: { item: 'other', take: 2, at: '2030-01-02T00:00:00.000Z' } };
    const doc = JSON.parse(renderSidecar(copy, file)) as Record<string, unknown>;
    expect(doc.copied_from).toEqual({ item: 'other', take: 2 });
    expect(doc.copied_at).toBe('2030-01-02T00:00:00.000Z');
    expect(Object.keys(doc).slice(-3)).toEqual(['copied_from', 'copied_at', 'file']);
    expect(renderSidecar({ ...FACTS, copied: null }, file)).toBe(renderSidecar(FACTS, file));
    expect(renderSidecar(FACTS, file)).not.toContain('copied');
  });

  it('says whether the take is kept once a keeper is chosen, and nothing before (null or absent)', () => {
    const kept = (facts: SidecarFacts) => (JSON.parse(renderSidecar(facts, file)) as { kept?: boolean }).kept;
    expect(kept({ ...FACTS, kept: true })).toBe(true);
    expect(kept({ ...FACTS, kept: false })).toBe(false);
    expect(renderSidecar({ ...FACTS, kept: null }, file)).toBe(renderSidecar(FACTS, file));
    expect(renderSidecar(FACTS, file)).not.toContain('"kept"');
    // Just after the take, before the prompt.
    expect(Object.keys(JSON.parse(renderSidecar({ ...FACTS, kept: true }, file))).slice(3, 6)).toEqual([
      'take',
      'kept',
      'prompt',
    ]);
  });

  it('gives the prompt only when the request has a text one', () => {
    const prompt = (requestBody: string) =>
      (JSON.parse(renderSidecar({ ...FACTS, requestBody }, file)) as { prompt: unknown }).prompt;
    expect(prompt('{"input":{"prompt":"a lighthouse"}}')).toBe('a lighthouse');
    expect(prompt('{"input":{"prompt":""}}')).toBe('');
    expect(prompt('{"input":{"prompt":42}}')).toBeNull();
    expect(prompt('{"input":{}}')).toBeNull();
    expect(prompt('{"model":"m"}')).toBeNull();
  });
});

describe('ensureSidecars', () => {
  it('leaves an identical sidecar alone, and writes one that differs or is missing', async () => {
    const dir = tempDir();
    const file = { path: join(dir, 'shot.mp4'), bytes: 3, sha256: 'ab' };
    expect(await ensureSidecars(FACTS, [file])).toBe(1);
    const text = readFileSync(join(dir, 'shot.json'), 'utf8');
    expect(text).toBe(renderSidecar(FACTS, file));
    expect(await ensureSidecars(FACTS, [file])).toBe(0);
    writeFileSync(join(dir, 'shot.json'), 'edited');
    expect(await ensureSidecars(FACTS, [file])).toBe(1);
    expect(readFileSync(join(dir, 'shot.json'), 'utf8')).toBe(text);
  });

  it('writes the sidecars of fresh files without looking at what lies there', async () => {
    const dir = tempDir();
    const file = { path: join(dir, 'shot.mp4'), bytes: 3, sha256: 'ab' };
    await ensureSidecars(FACTS, [file]);
    expect(await ensureSidecars(FACTS, [file], { fresh: true })).toBe(1);
    expect(readFileSync(join(dir, 'shot.json'), 'utf8')).toBe(renderSidecar(FACTS, file));
  });

  it('fsyncs the folder after renaming a sidecar into place, unless the caller will', async () => {
    const dir = realpathSync(tempDir());
    const file = { path: join(dir, 'shot.mp4'), bytes: 3, sha256: 'ab' };
    const shared = await traceDisk(() => ensureSidecars(FACTS, [file]));
    expect(shared.at(-2)).toMatch(new RegExp(`^rename .* -> ${join(dir, 'shot.json')}$`));
    expect(shared.at(-1)).toBe(`fsync ${dir}`);
    const left = await traceDisk(() => ensureSidecars(FACTS, [file], { fresh: true, syncFolder: false }));
    expect(left).toHaveLength(2);
    expect(left.at(-1)).toMatch(new RegExp(`^rename .* -> ${join(dir, 'shot.json')}$`));
  });
});

describe('renderSidecar with template variables', () => {
  const file = { path: '/x/shot.mp4', bytes: 3, sha256: 'ab' };

  it('shows the variables after the prompt, in the order they were declared', () => {
    const doc = JSON.parse(
      renderSidecar({ ...FACTS, vars: '{"subject":"lighthouse","light":"soft"}' }, file),
    );
    expect(Object.keys(doc).slice(4, 7)).toEqual(['prompt', 'vars', 'request']);
    expect(doc.vars).toEqual({ subject: 'lighthouse', light: 'soft' });
    expect(Object.keys(doc.vars)).toEqual(['subject', 'light']);
  });

  it('writes the same bytes as before templates for an item without variables', () => {
    const before = renderSidecar(FACTS, file);
    expect(renderSidecar({ ...FACTS, vars: null }, file)).toBe(before);
    expect(JSON.parse(before)).not.toHaveProperty('vars');
  });
});

describe("a sidecar's check", () => {
  const file = { path: 'out/shot.mp4', bytes: 3, sha256: 'ab' };
  const keys = (facts: SidecarFacts) => Object.keys(JSON.parse(renderSidecar(facts, file)));

  it('is added once known, just before the file, and leaves the facts as they were when unknown', () => {
    expect(withCheck(FACTS, null)).toBe(FACTS);
    const failed = { outcome: 'failed' as const, reason: '1 s long, 2 s asked for', score: 0.25 };
    const checked = withCheck(FACTS, failed);
    expect(checked).toEqual({ ...FACTS, check: failed });
    expect(FACTS).not.toHaveProperty('check');
    expect(JSON.parse(renderSidecar(checked, file)).check).toEqual(failed);
    expect(keys(checked).slice(-2)).toEqual(['check', 'file']);
    // A take saved before checks: its sidecar stays byte for byte what it was.
    expect(keys(FACTS)).not.toContain('check');
    expect(renderSidecar({ ...FACTS, check: null }, file)).toBe(renderSidecar(FACTS, file));
  });

  it('says kept only once a keeper is chosen, false included', () => {
    expect(keys({ ...FACTS, kept: null })).not.toContain('kept');
    expect(JSON.parse(renderSidecar({ ...FACTS, kept: false }, file)).kept).toBe(false);
    expect(JSON.parse(renderSidecar({ ...FACTS, kept: true }, file)).kept).toBe(true);
  });
});
