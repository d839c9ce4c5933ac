import { describe, expect, it } from 'vitest';
import { RunState } from '../../src/runner/run-state.js';
import {
  DEFAULT_BYTES_PER_OUTPUT,
  guessWarning,
  judgeWave,
  nextWaveBytes,
  type WaveEstimate,
  waveWords,
} from '../../src/runner/save-estimate.js';

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

const MiB = 1024 * 1024;
const guessed = (outputs: number): WaveEstimate =>
  nextWaveBytes({ waiting: 5, slots: outputs, unsaved: 0, savedBytes: 0, savedOutputs: 0 });
const learnt = (outputs: number, bytesPerOutput: number): WaveEstimate =>
  nextWaveBytes({ waiting: 5, slots: outputs, unsaved: 0, savedBytes: bytesPerOutput, savedOutputs: 1 });

describe('judgeWave: only a learnt size refuses', () => {
  it('lets a wave that fits run at full concurrency, guessed or learnt, to the byte', () => {
    expect(judgeWave(guessed(3), 48 * MiB)).toBe('fits');
    expect(judgeWave(learnt(3, 20_000), 60_000)).toBe('fits');
    expect(
      judgeWave(nextWaveBytes({ waiting: 0, slots: 3, unsaved: 0, savedBytes: 0, savedOutputs: 0 }), 0),
    ).toBe('fits');
  });

  it('goes one job at a time when only the 16 MiB guess does not fit (8 MiB free, 3 slots)', () => {
    expect(judgeWave(guessed(3), 8 * MiB)).toBe('one_at_a_time');
    expect(judgeWave(guessed(3), 48 * MiB - 1)).toBe('one_at_a_time');
    // Even a folder without room for one guessed output: the guess proves nothing.
    expect(judgeWave(guessed(1), 4096)).toBe('one_at_a_time');
  });

  it('says short when the size learnt from saved files does not fit', () => {
    expect(judgeWave(learnt(2, MiB), 2 * MiB - 1)).toBe('short');
    expect(judgeWave(learnt(3, 20_000), 59_999)).toBe('short');
  });
});

describe('the words of a wave', () => {
  it('say whether the size is a guess or the mean so far', () => {
    expect(waveWords('/out', 8 * MiB, guessed(3))).toBe(
      'the output folder /out has 8.0 MiB free, and the next 3 output(s) are expected to take about 48.0 MiB (16.0 MiB each, a guess until a file is saved)',
    );
    expect(waveWords('/out', 1536 * 1024, learnt(2, MiB))).toBe(
      "the output folder /out has 1.5 MiB free, and the next 2 output(s) are expected to take about 2.0 MiB (1.0 MiB each, this batch's mean so far)",
    );
  });

  it('warn that the run goes one job at a time until it learns', () => {
    expect(guessWarning({ folder: '/out', freeBytes: 8 * MiB, wave: guessed(3) })).toMatch(
      /a guess until a file is saved\); submitting one job at a time until this batch has saved a file, then going on with the size it learnt$/,
    );
  });
});

describe('the run state: one slot while the size is a guess', () => {
  it('limits submissions to one until the learnt size is judged, then gives every slot back', () => {
    const state = new RunState(3);
    expect(state.slotLimit).toBe(3);
    expect(state.sizing.beginCheck()).toBe(false);
    state.sizing.guess();
    state.setSlotLimit(4);
    expect([state.slotLimit, state.fullSlotLimit]).toEqual([1, 4]);
    // A finished job whose file is still being saved holds the one slot.
    expect([state.freeSlots(0), state.freeSlots(1)]).toEqual([1, 0]);
    // The first saved file starts one check; a second save meanwhile starts none.
    expect(state.sizing.beginCheck()).toBe(true);
    expect(state.sizing.beginCheck()).toBe(false);
    expect(state.slotLimit).toBe(1);
    // While the learnt size is judged, nothing is submitted.
    expect(state.freeSlots(0)).toBe(0);
    state.sizing.stillGuessed();
    expect(state.sizing.beginCheck()).toBe(true);
    state.sizing.learnt();
    expect(state.slotLimit).toBe(4);
    // Once the size is known, downloads hold no slot of the service.
    expect(state.freeSlots(2)).toBe(4);
    expect(state.sizing.beginCheck()).toBe(false);
  });
});
