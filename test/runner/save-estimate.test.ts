import { describe, expect, it } from 'vitest';
import { DEFAULT_BYTES_PER_OUTPUT, nextWaveBytes } from '../../src/runner/save-estimate.js';

describe('nextWaveBytes: the free space asked for before the first submission', () => {
  it('guesses 16 MiB per output until a file is saved, one output per slot', () => {
    expect(DEFAULT_BYTES_PER_OUTPUT).toBe(16 * 1024 * 1024);
    expect(nextWaveBytes({ waiting: 10, slots: 3, unsaved: 0, savedBytes: 0, savedOutputs: 0 })).toEqual({
      outputs: 3,
      bytesPerOutput: DEFAULT_BYTES_PER_OUTPUT,
      learnt: false,
      bytes: 3 * DEFAULT_BYTES_PER_OUTPUT,
    });
  });

  it("learns the batch's mean size per output, rounded up, once files are saved", () => {
    expect(nextWaveBytes({ waiting: 5, slots: 2, unsaved: 0, savedBytes: 1001, savedOutputs: 2 })).toEqual({
      outputs: 2,
      bytesPerOutput: 501,
      learnt: true,
      bytes: 1002,
    });
  });

  it('counts finished jobs waiting to be saved, but never more outputs than items left', () => {
    expect(nextWaveBytes({ waiting: 6, slots: 2, unsaved: 3, savedBytes: 0, savedOutputs: 0 }).outputs).toBe(
      5,
    );
    expect(nextWaveBytes({ waiting: 4, slots: 2, unsaved: 3, savedBytes: 0, savedOutputs: 0 }).outputs).toBe(
      4,
    );
    expect(nextWaveBytes({ waiting: 1, slots: 8, unsaved: 0, savedBytes: 0, savedOutputs: 0 }).outputs).toBe(
      1,
    );
  });

  it('asks for nothing when nothing is left to save', () => {
    expect(nextWaveBytes({ waiting: 0, slots: 3, unsaved: 0, savedBytes: 10, savedOutputs: 1 }).bytes).toBe(
      0,
    );
  });

  it('takes at least one slot', () => {
    expect(nextWaveBytes({ waiting: 3, slots: 0, unsaved: 0, savedBytes: 0, savedOutputs: 0 }).outputs).toBe(
      1,
    );
  });
});
