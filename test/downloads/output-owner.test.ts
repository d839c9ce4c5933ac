import {
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkOwner,
  claimFolder,
  markerText,
  movedWithProject,
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
      ledger_at: '/p/.mediabatch/spring.sqlite',
      service: 'http://h/v1',
      claimed_at: '2026-01-01T00:00:00.000Z',
    });
    expect(parseMarker(folder, text)).toEqual({ ...spring, ledgerAt: spring.ledger });
    // The whole project moved: the claim moves with it.
    const moved = parseMarker('/q/out/spring', text) as typeof spring;
    expect(moved).toEqual({ ...spring, ledger: '/q/.mediabatch/spring.sqlite', ledgerAt: spring.ledger });
    expect(ownerVerdict(moved, { ...spring, ledger: '/q/.mediabatch/spring.sqlite' })).toEqual({
      kind: 'mine',
    });
    // The project moved without its ledger, kept elsewhere with --ledger: where it is still names it.
    const apart = markerText(folder, { ...spring, ledger: '/keep/l.sqlite' }, 'now');
    const seen = parseMarker('/q/out/spring', apart) as typeof spring;
    expect(ownerVerdict(seen, { ...spring, ledger: '/keep/l.sqlite' })).toEqual({ kind: 'mine' });
    expect(ownerVerdict(seen, { ...spring, ledger: '/keep/other.sqlite' })).toMatchObject({ kind: 'other' });
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
    const marker = (fields: object) => JSON.stringify({ mediabatch_output_folder: 1, ...fields });
    expect(parseMarker(folder, marker({ manifest: 5, ledger: '/l.sqlite' }))).toEqual({
      problem: 'it is not a mediabatch owner marker',
    });
    expect(parseMarker(folder, marker({ manifest: 'spring', ledger: null }))).toEqual({
      problem: 'it is not a mediabatch owner marker',
    });
  });

  it('reads a marker without a service as an unknown service: the owner is the ledger and batch', () => {
    const owner = { manifest: 'spring', ledger: '/l.sqlite', service: 'unknown', absolute: true };
    expect(
      parseMarker(folder, '{"mediabatch_output_folder":1,"manifest":"spring","ledger":"/l.sqlite"}'),
    ).toEqual(owner);
    const numbered = '{"mediabatch_output_folder":1,"manifest":"spring","ledger":"/l.sqlite","service":7}';
    expect(parseMarker(folder, numbered)).toEqual(owner);
  });

  it('reads a folder that is not there, or is a file, as unclaimed; a marker it cannot read as unreadable', () => {
    const root = tempDir('owner-read-');
    expect(checkOwner(join(root, 'missing'), spring)).toEqual({ kind: 'unclaimed' });
    // A file where the folder would be: the run's downloads report it, the claim does not.
    writeFileSync(join(root, 'file'), 'x');
    expect(checkOwner(join(root, 'file'), spring)).toEqual({ kind: 'unclaimed' });
    const odd = join(root, 'odd');
    mkdirSync(join(odd, OWNER_MARKER), { recursive: true });
    expect(checkOwner(odd, spring)).toEqual({
      kind: 'unreadable',
      reason: expect.stringMatching(/^EISDIR: illegal operation on a directory, read/),
    });
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
    expect(claimFolder(out, other, 'later')).toEqual({
      kind: 'other',
      owner: { ...me, ledgerAt: me.ledger },
    });
    const broken = join(root, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, OWNER_MARKER), '{');
    expect(claimFolder(broken, me, 'now')).toEqual({ kind: 'unreadable', reason: 'it is not JSON' });
  });

  it('takes an older absolute marker for this project moved only when batch, ledger name and a gone old path agree', () => {
    const old = { ...spring, absolute: true as const };
    const moved = { manifest: 'spring', ledger: '/q/.mediabatch/spring.sqlite' };
    const gone = () => false;
    expect(movedWithProject(old, moved, gone)).toBe(true);
    // The old ledger is still there: another batch's, or the original a copy was made from.
    expect(movedWithProject(old, moved, (path) => path === spring.ledger)).toBe(false);
    expect(movedWithProject(old, { ...moved, ledger: '/q/.mediabatch/other.sqlite' }, gone)).toBe(false);
    expect(movedWithProject(old, { ...moved, manifest: 'summer' }, gone)).toBe(false);
    // A marker written relative to its folder moves with the project; it is never guessed at.
    expect(movedWithProject(spring, moved, gone)).toBe(false);
  });

  it('renews an older absolute marker of this moved project in the relative form; keeps one whose ledger lives', () => {
    const root = tempDir('owner-moved-');
    const out = join(root, 'out', 'spring');
    mkdirSync(out, { recursive: true });
    const me = { ...spring, ledger: join(root, '.mediabatch', 'spring.sqlite') };
    const absoluteMarker = (ledger: string) =>
      JSON.stringify({ mediabatch_output_folder: 1, manifest: 'spring', ledger, service: 'http://h/v1' });
    // Written before markers were relative, by this ledger where it is now: still this ledger's.
    writeFileSync(join(out, OWNER_MARKER), absoluteMarker(me.ledger));
    expect(checkOwner(out, me)).toEqual({ kind: 'mine' });
    // The project was elsewhere then, and nothing is left there.
    writeFileSync(
      join(out, OWNER_MARKER),
      absoluteMarker(join(root, 'gone', '.mediabatch', 'spring.sqlite')),
    );
    expect(checkOwner(out, me)).toEqual({ kind: 'mine', moved: true });
    expect(claimFolder(out, me, 'now')).toEqual({ kind: 'mine' });
    expect(readFileSync(join(out, OWNER_MARKER), 'utf8')).toBe(markerText(out, me, 'now'));
    expect(readdirSync(out)).toEqual([OWNER_MARKER]);
    // Another project's ledger, alive at the marker's path, keeps the folder, marker untouched.
    const living = join(root, 'other', '.mediabatch', 'spring.sqlite');
    mkdirSync(join(root, 'other', '.mediabatch'), { recursive: true });
    writeFileSync(living, '');
    writeFileSync(join(out, OWNER_MARKER), absoluteMarker(living));
    expect(claimFolder(out, me, 'now')).toMatchObject({ kind: 'other', owner: { ledger: living } });
    expect(readFileSync(join(out, OWNER_MARKER), 'utf8')).toBe(absoluteMarker(living));
  });

  it('writes nothing into a folder another ledger owns or whose marker it cannot read', () => {
    const root = tempDir('owner-other-');
    const past = new Date('2020-01-01T00:00:00Z');
    for (const [name, text, kind] of [
      ['other', markerText(join(root, 'other'), { ...spring, manifest: 'summer' }, 'then'), 'other'],
      ['broken', '{', 'unreadable'],
    ] as const) {
      const out = join(root, name);
      mkdirSync(out);
      writeFileSync(join(out, OWNER_MARKER), text);
      // Any name made and removed in the folder would move its modification time.
      utimesSync(out, past, past);
      expect(claimFolder(out, spring, 'now')).toMatchObject({ kind });
      expect(readdirSync(out)).toEqual([OWNER_MARKER]);
      expect(statSync(out).mtimeMs).toBe(past.getTime());
      expect(readFileSync(join(out, OWNER_MARKER), 'utf8')).toBe(text);
    }
  });

  it("never replaces a name already at the marker's place: losing the race is not mine", () => {
    // The marker's name taken between the check and the link, as by a second first run: a link
    // to nowhere reads as no marker, and cannot be linked over.
    const out = join(tempDir('owner-race-'), 'out');
    mkdirSync(out);
    symlinkSync('nowhere', join(out, OWNER_MARKER));
    expect(claimFolder(out, spring, 'now')).toEqual({ kind: 'unclaimed' });
    expect(readlinkSync(join(out, OWNER_MARKER))).toBe('nowhere');
    expect(readdirSync(out)).toEqual([OWNER_MARKER]);
  });
});
