import { describe, expect, it } from 'vitest';
import { narrowRead } from '../../src/runner/narrow-read.js';

describe('narrowRead', () => {
  it('reads by the ids up to 2,000 of them, the whole batch past that', () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `item-${i}`);
    expect(narrowRead([])).toEqual([]);
    expect(narrowRead(ids(2000))).toEqual(ids(2000));
    expect(narrowRead(ids(2001))).toBeUndefined();
  });
});
