import { UserError } from '../../errors.js';
import type { ReadingLedger, RecordReads } from '../../ledger/index.js';
import { isS3Uri, type Manifest } from '../../manifest/index.js';
import type { RunOptions } from '../../runner/run-context.js';
import {
  judgeWave,
  nextWaveBytes,
  type SizeGuess,
  type WaveEstimate,
  waveWords,
} from '../../runner/save-estimate.js';
import { storeRefusal } from '../../runner/stop-rules.js';
import type { OutputStore } from '../../storage/output-store.js';

/**
 * Saving comes before spending: before `run` submits anything, the output folder must take a file
 * the way a download is saved (probeFolder) and have room for the next wave's files
 * (nextWaveBytes), judged by judgeWave. Otherwise the run ends with exit 2 and nothing submitted
 * (docs/overnight.md). Only a guessed size that does not fit lets the run start, one job at a
 * time: the guess is returned for the runner to start from; null when the wave fits.
 */
export async function checkOutputFolder(
  manifest: Manifest,
  ledger: RecordReads & ReadingLedger,
  options: RunOptions,
  store: OutputStore,
): Promise<SizeGuess | null> {
  return judgeOutputFolder(manifest.outputDir, await waveOf(manifest, ledger, options), store);
}

/**
 * The probe and its verdict, shared with `plan` (plan-check.ts): a guessed size too large, or
 * null when the wave fits; a folder that refuses, or a wave that does not fit, throws (exit 2).
 */
export async function judgeOutputFolder(
  folder: string,
  wave: WaveEstimate,
  store: OutputStore,
): Promise<SizeGuess | null> {
  const probe = await store.probe(wave.bytes);
  if (probe.ok) return null;
  const fix = storeFix(folder, probe.code);
  if ('freeBytes' in probe) {
    const { freeBytes } = probe;
    if (judgeWave(wave, freeBytes) === 'one_at_a_time') return { folder, freeBytes, wave };
    throw new UserError(
      `${waveWords(folder, freeBytes, wave)}; nothing was submitted. Free some space, or set output.dir to a larger disk`,
      'output_unusable',
    );
  }
  throw new UserError(
    `the output folder ${folder} cannot take files: could not ${probe.step} (${probe.reason}); nothing was submitted${fix ? `. ${fix}` : ''}`,
    'output_unusable',
  );
}

/**
 * What a person must fix when the output location refuses or does not answer, as a sentence, from
 * the error's code (an errno or an S3 error code); undefined when the code says nothing general.
 */
export function storeFix(folder: string, code: string | null | undefined): string | undefined {
  const refusal = storeRefusal(code ?? undefined, folder)?.message;
  if (refusal !== undefined) return capitalised(refusal);
  if (isS3Uri(folder) && (code?.startsWith('E') || code === 'TimeoutError'))
    return 'The storage endpoint did not answer: check AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) and that the server is up';
  return undefined;
}

/** The next wave's files; a batch with no ledger yet has every item waiting and nothing saved. */
export async function waveOf(
  manifest: Pick<Manifest, 'concurrency'> & Partial<Pick<Manifest, 'items'>>,
  ledger: (RecordReads & ReadingLedger) | null,
  options: Pick<RunOptions, 'only' | 'defaultSlotLimit'>,
  /** The items not done or failed, counted by the caller (a streamed plan, as its items went past). */
  counted?: number,
): Promise<WaveEstimate> {
  const waiting = counted ?? (await waitingItems(manifest.items ?? [], ledger, options.only ?? null));
  // The saved files' sizes are summed by SQLite: a large batch's file rows are never all read here.
  const saved = (await ledger?.savedFileTotals()) ?? { bytes: 0, outputs: 0 };
  return nextWaveBytes({
    waiting,
    slots: manifest.concurrency ?? options.defaultSlotLimit,
    unsaved: (await ledger?.unsavedSucceeded())?.length ?? 0,
    savedBytes: saved.bytes,
    savedOutputs: saved.outputs,
  });
}

/** The items a run would still try: neither done nor failed in the ledger (of `only`, when given). */
async function waitingItems(
  items: readonly Manifest['items'][number][],
  ledger: RecordReads | null,
  only: ReadonlySet<string> | null,
): Promise<number> {
  const states = new Map((await ledger?.listItems())?.map((record) => [record.itemId, record.state]));
  return items.filter((item) => {
    const state = states.get(item.id);
    return (only === null || only.has(item.id)) && waits(state);
  }).length;
}

/** Whether an item in this ledger state (none: the ledger does not know it) waits for a run. */
export const waits = (state: string | undefined): boolean => state !== 'done' && state !== 'failed';

const capitalised = (text: string) => `${text[0]!.toUpperCase()}${text.slice(1)}`;
