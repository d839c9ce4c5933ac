import { createHash } from 'node:crypto';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSavedFile, judgeFile } from '../../src/downloads/saved-file-check.js';
import { tempDir } from '../support/temp.js';

const SHA = 'a'.repeat(64);
const recorded = { bytes: 10, sha256: SHA, mtimeMs: 1_000 };

describe('judgeFile', () => {
  it('calls nothing at the path missing, and another size altered, whatever else is known', () => {
    expect(judgeFile(recorded, null).check).toBe('missing');
    expect(judgeFile(recorded, { size: 11, mtimeMs: 1_000 })).toEqual({
      check: 'altered',
      detail: '11 bytes, 10 when saved',
    });
    expect(judgeFile(recorded, { size: 9, mtimeMs: 1_000 }, SHA).check).toBe('altered');
  });

  it('without the content, tells a file modified since by its time, compared in whole ms', () => {
    expect(judgeFile(recorded, { size: 10, mtimeMs: 1_000.9 }).check).toBe('intact');
    // A time set back to the recorded ms can read back a hair below it (a double through utimes).
    expect(judgeFile(recorded, { size: 10, mtimeMs: 999.999906 }).check).toBe('intact');
    expect(judgeFile(recorded, { size: 10, mtimeMs: 999 }).check).toBe('touched');
    expect(judgeFile(recorded, { size: 10, mtimeMs: 1_001 }).check).toBe('touched');
    expect(judgeFile(recorded, { size: 10, mtimeMs: 2_000 }).check).toBe('touched');
    // Saved before times were recorded: only the size can be compared.
    expect(judgeFile({ ...recorded, mtimeMs: null }, { size: 10, mtimeMs: 2_000 }).check).toBe('intact');
  });

  it('with the content read, the SHA-256 decides, whatever the time says', () => {
    expect(judgeFile(recorded, { size: 10, mtimeMs: 2_000 }, SHA).check).toBe('intact');
    expect(judgeFile(recorded, { size: 10, mtimeMs: 1_000 }, 'b'.repeat(64))).toEqual({
      check: 'altered',
      detail: 'same size, but its SHA-256 differs from the one recorded when saved',
    });
  });
});

describe('checkSavedFile', () => {
  it('stats the file, and reads it only when asked to verify', () => {
    const dir = tempDir();
    const path = join(dir, 'a.mp4');
    const body = Buffer.from('saved clip');
    writeFileSync(path, body);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const mtimeMs = Math.trunc(statSync(path).mtimeMs);
    const facts = { bytes: body.length, sha256, mtimeMs };
    expect(checkSavedFile(path, facts, true).check).toBe('intact');
    const wrongSha = { ...facts, sha256: SHA };
    expect(checkSavedFile(path, wrongSha, false).check).toBe('intact');
    expect(checkSavedFile(path, wrongSha, true).check).toBe('altered');
    expect(checkSavedFile(join(dir, 'none.mp4'), facts, true).check).toBe('missing');
    mkdirSync(join(dir, 'folder.mp4'));
    expect(checkSavedFile(join(dir, 'folder.mp4'), facts, false).check).toBe('missing');
  });
});
