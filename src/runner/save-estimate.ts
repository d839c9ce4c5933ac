/**
 * How much free space `run` asks for before its first submission: the expected size of the files
 * of the next wave, that is of the outputs it may have to save before it can learn anything more.
 * Pure; the pre-run check (src/lib/save-check.ts) reads the inputs from the ledger and the disk.
 */

/**
 * A guess for a batch that has saved nothing yet: 16 MiB is about a 10-second 1080p H.264 clip at
 * 12 Mbit/s, more than most generated clips take. Once the ledger holds saved files, their mean
 * size per output replaces it.
 */
export const DEFAULT_BYTES_PER_OUTPUT = 16 * 1024 * 1024;

export interface WaveInputs {
  /** Items this run may still save files for: neither done nor finally failed (in flight or to submit). */
  waiting: number;
  /** How many jobs run at once: the manifest's concurrency, else the service's default. */
  slots: number;
  /** Succeeded jobs whose files wait to be saved: they are saved first. */
  unsaved: number;
  /** Bytes of every file saved so far, and how many outputs (saved attempts) they came from. */
  savedBytes: number;
  savedOutputs: number;
}

export interface WaveEstimate {
  outputs: number;
  bytesPerOutput: number;
  /** Whether bytesPerOutput was learnt from this batch's saved files rather than guessed. */
  learnt: boolean;
  bytes: number;
}

export function nextWaveBytes(inputs: WaveInputs): WaveEstimate {
  const learnt = inputs.savedOutputs > 0;
  const bytesPerOutput = learnt
    ? Math.ceil(inputs.savedBytes / inputs.savedOutputs)
    : DEFAULT_BYTES_PER_OUTPUT;
  // The finished jobs waiting to be saved, and one job per slot after them: no more than the items left.
  const outputs = Math.min(Math.max(0, inputs.waiting), inputs.unsaved + Math.max(1, inputs.slots));
  return { outputs, bytesPerOutput, learnt, bytes: outputs * bytesPerOutput };
}
