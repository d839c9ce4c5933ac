import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkOwner,
  claimFolder,
  markerText,
  OWNER_MARKER,
  ownerVerdict,
  parseMarker,
} from '../../src/downloads/output-owner.js';
import { tempDir } from '../support/temp.js';

const folder = '/p/out/spring';
const spring = { manifest: 'spring', ledger: '/p/.mediabatch/spring.sqlite', service: 'http://h/v1' };

describe('who owns an output folder', () => {
  it('writes the ledger relative to the folder and reads it back absolute', () => {
    const text = markerText(folder, spring, '2026-01-01T00:00:00.000Z');
    expect(JSON.parse(text)).toEqual({
      mediabatch_output_folder: 1,
      manifest: 'spring',
      ledger: '../../.mediabatch/spring.sqlite',
      service: 'http://h/v1',
      claimed_at: '2026-01-01T00:00:00.000Z',
    });
    expect(parseMarker(folder, text)).toEqual(spring);
    // The whole project moved: the claim moves with it.
    expect(parseMarker('/q/out/spring', text)).toEqual({ ...spring, ledger: '/q/.mediabatch/spring.sqlite' });
  });

  it('is the same ledger and batch, or another owner', () => {
    expect(ownerVerdict(null, spring)).toEqual({ kind: 'unclaimed' });
    expect(ownerVerdict(spring, spring)).toEqual({ kind: 'mine' });
    const otherLedger = { ...spring, ledger: '/p/.mediabatch/copy.sqlite' };
    expect(ownerVerdict(spring, otherLedger)).toEqual({ kind: 'other', owner: spring });
    // One ledger file may hold several batches: the batch is part of the owner.
    expect(ownerVerdict(spring, { ...spring, manifest: 'summer' })).toEqual({ kind: 'other', owner: spring });
  });

  it('says why a marker cannot be read', () => {
    expect(parseMarker(folder, 'not json')).toEqual({ problem: 'it is not JSON' });
    expect(parseMarker(folder, '{"manifest": "x", "ledger": "y"}')).toEqual({
      problem: 'it is not a mediabatch owner marker',
    });
    expect(parseMarker(folder, 'null')).toEqual({ problem: 'it is not a mediabatch owner marker' });
  });

  it('claims a folder once: the first ledger wins, the second is told who owns it', () => {
    const root = tempDir('owner-');
    const out = join(root, 'out', 'spring');
    const me = { ...spring, ledger: join(root, '.mediabatch', 'spring.sqlite') };
    const other = { ...me, ledger: join(root, '.mediabatch', 'other.sqlite') };
    expect(checkOwner(out, me)).toEqual({ kind: 'unclaimed' });
    expect(claimFolder(out, me, 'now')).toEqual({ kind: 'mine' });
    expect(readFileSync(join(out, OWNER_MARKER), 'utf8')).toBe(markerText(out, me, 'now'));
    expect(claimFolder(out, me, 'later')).toEqual({ kind: 'mine' });
    expect(readFileSync(join(out, OWNER_MARKER), 'utf8')).toBe(markerText(out, me, 'now'));
    expect(claimFolder(out, other, 'later')).toEqual({ kind: 'other', owner: me });
    const broken = join(root, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, OWNER_MARKER), '{');
    expect(claimFolder(broken, me, 'now')).toEqual({ kind: 'unreadable', reason: 'it is not JSON' });
  });
});
