import { describe, expect, it } from 'vitest';
import { namesOf } from '../../src/runner/shown-ids.js';

describe('namesOf: one line however many items a step moves', () => {
  it('names up to five ids, then says how many more', () => {
    expect(namesOf(['a'])).toBe('a');
    expect(namesOf(['a', 'b', 'c', 'd', 'e'])).toBe('a, b, c, d, e');
    expect(namesOf(['a', 'b', 'c', 'd', 'e', 'f', 'g'])).toBe('a, b, c, d, e and 2 more item(s)');
  });
});
