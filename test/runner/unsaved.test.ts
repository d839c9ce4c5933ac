import { describe, expect, it } from 'vitest';
import { UnsavedBound, unsavedBound } from '../../src/runner/unsaved.js';

describe('the bound on outputs paid for and not yet saved', () => {
  it('is the setting, else twice the slot limit (at least 2)', () => {
    expect(unsavedBound(7, 50)).toBe(7);
    expect(unsavedBound(null, 250)).toBe(500);
    expect(unsavedBound(undefined, 0)).toBe(2);
  });

  it('leaves room for what is under it: unfinished jobs and unsaved outputs both count', () => {
    const bound = new UnsavedBound(10);
    expect(bound.room(4, 0, 0)).toBe(10);
    expect(bound.room(4, 4, 3)).toBe(3);
    expect(bound.room(4, 4, 6)).toBe(0);
    expect(bound.room(4, 4, 9)).toBe(0);
    expect(new UnsavedBound(null).room(3, 3, 1)).toBe(2);
  });

  it('says when holding starts and when it ends, once each', () => {
    const bound = new UnsavedBound(null);
    expect(bound.held).toBe(false);
    expect(bound.hold(false)).toBe(false);
    expect(bound.hold(true)).toBe(true);
    expect(bound.held).toBe(true);
    expect(bound.hold(true)).toBe(false);
    expect(bound.hold(false)).toBe(true);
    expect(bound.held).toBe(false);
  });
});
