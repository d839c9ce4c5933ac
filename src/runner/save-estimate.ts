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

/**
 * What the free space says about the next wave. A learnt size that does not fit refuses: before
 * the run, with nothing spent; during it, as a full disk stops submissions. A guess that does not
 * fit proves nothing (a 20 KB clip is not 16 MiB), so it never blocks: the run submits one job at a
 * time until a saved file tells the real size, and then judges again.
 */
export type WaveVerdict = 'fits' | 'one_at_a_time' | 'short';

export function judgeWave(wave: WaveEstimate, freeBytes: number): WaveVerdict {
  if (freeBytes >= wave.bytes) return 'fits';
  return wave.learnt ? 'short' : 'one_at_a_time';
}

/** The pre-run check found only the guessed size too large: what the run starts from. */
export interface SizeGuess {
  folder: string;
  freeBytes: number;
  wave: WaveEstimate;
}

/** Sizes for people: KiB below a mebibyte, else MiB with one decimal. */
export const mib = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;

/** How much a wave needs, as both the refusal and the warning say it. */
export function waveWords(folder: string, freeBytes: number, wave: WaveEstimate): string {
  const each = wave.learnt ? "this batch's mean so far" : 'a guess until a file is saved';
  return `the output folder ${folder} has ${mib(freeBytes)} free, and the next ${wave.outputs} output(s) are expected to take about ${mib(wave.bytes)} (${mib(wave.bytesPerOutput)} each, ${each})`;
}

/** The warning of a run that starts one job at a time because only the guess did not fit. */
export function guessWarning(guess: SizeGuess): string {
  return `${waveWords(guess.folder, guess.freeBytes, guess.wave)}; submitting one job at a time until this batch has saved a file, then going on with the size it learnt`;
}
