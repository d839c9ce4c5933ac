import { describe, expect, it } from 'vitest';
import { foreignFiles, itemsInTheWay, namesTaken } from '../../src/manifest/taken-names.js';

const out = '/p/out/x';

describe('files a ledger did not write, and the items whose names they take', () => {
  it('leaves out saved files, their sidecars and downloads in progress', () => {
    const saved: Array<[string, string]> = [
      ['a', `${out}/a.mp4`],
      ['a', `${out}/a.take1.mp4`],
    ];
    const present = [
      `${out}/a.mp4`,
      `${out}/a.json`,
      `${out}/a.take1.mp4`,
      `${out}/a.take1.json`,
      `${out}/.x1.mbtmp`,
      `${out}/b.mp4`,
      `${out}/notes.txt`,
    ];
    expect(foreignFiles(present, saved)).toEqual([`${out}/b.mp4`, `${out}/notes.txt`]);
  });

  it("matches an item's file, one of its numbered files, its sidecar, and names with folders", () => {
    const items = [{ id: 'a' }, { id: 'b' }, { id: 'c', name: '16-9/c' }, { id: 'd' }];
    const foreign = [
      `${out}/a.mp4`,
      `${out}/b-2.mp4`,
      `${out}/b.json`,
      `${out}/16-9/c.webm`,
      `${out}/d.take1.mp4`,
      `${out}/dd.mp4`,
      `${out}/c.mp4`,
    ];
    expect([...itemsInTheWay(out, items, foreign)]).toEqual([
      ['a', [`${out}/a.mp4`]],
      ['b', [`${out}/b-2.mp4`, `${out}/b.json`]],
      ['c', [`${out}/16-9/c.webm`]],
    ]);
  });

  it('holds back only the items whose name a file the ledger did not write takes (run and plan alike)', () => {
    const items = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
    const saved: Array<[string, string]> = [['a', `${out}/a.mp4`]];
    const present = [`${out}/a.mp4`, `${out}/a.json`, `${out}/b.mp4`, `${out}/notes.txt`];
    expect([...namesTaken(out, items, present, saved)]).toEqual([['b', [`${out}/b.mp4`]]]);
    expect(namesTaken(out, items, [`${out}/notes.txt`], saved).size).toBe(0);
  });
});
