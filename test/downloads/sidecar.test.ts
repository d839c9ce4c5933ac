import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureSidecars, renderSidecar, type SidecarFacts } from '../../src/downloads/sidecar.js';
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
