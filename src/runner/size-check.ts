/**
 * A run whose pre-run check found only the guessed output size too large starts one job at a time
 * (output-sizing.ts). The first file it saves tells the real size, and the next wave is judged by
 * it at once, as the pre-run check judges a learnt size (save-estimate.ts): it fits, and every
 * slot is used again; it does not, and submissions stop as they do when the disk is full, while
 * the jobs in flight are still watched and saved.
 */
import type { RunContext } from './run-context.js';
import { guessWarning, judgeWave, mib, nextWaveBytes, type WaveVerdict, waveWords } from './save-estimate.js';
import { storeRefusal } from './stop-rules.js';

/** At the start of the run: one job at a time, and a warning that says why. */
export function startGuessing(run: RunContext): void {
  const guess = run.options.sizeGuess;
  if (!guess) return;
  run.state.sizing.guess();
  run.deps.observer.log('warn', guessWarning(guess));
}

/** A file was saved: while the size is a guess, judge the size learnt from it (once). */
export function fileSaved(run: RunContext): void {
  if (run.state.sizing.beginCheck()) run.background(judgeLearntSize(run));
}

async function judgeLearntSize(run: RunContext): Promise<void> {
  // Called while the save commits: let the download queue count it out of the files to save first.
  await Promise.resolve();
  const { state, deps, downloads } = run;
  const saved = await deps.ledger.savedFileTotals();
  const unsaved = downloads.activeCount + downloads.queuedCount;
  const wave = nextWaveBytes({
    waiting: state.queue.length + state.unfinished + unsaved,
    slots: state.fullSlotLimit,
    unsaved,
    savedBytes: saved.bytes,
    savedOutputs: saved.outputs,
  });
  const folder = deps.manifest.outputDir;
  let probe: Awaited<ReturnType<typeof deps.store.probe>>;
  try {
    probe = await deps.store.probe(wave.bytes);
  } catch (error) {
    probe = { ok: false, step: 'check', code: null, reason: (error as Error).message };
  }
  const verdict: WaveVerdict | null = probe.ok
    ? 'fits'
    : 'freeBytes' in probe
      ? judgeWave(wave, probe.freeBytes)
      : null;
  if (verdict === 'fits') {
    state.sizing.learnt();
    deps.observer.log(
      'info',
      `the files saved so far take ${mib(wave.bytesPerOutput)} per output, and the next ${wave.outputs} fit in ${folder}: submitting up to ${state.slotLimit} at a time`,
    );
    run.wake();
  } else if (verdict === 'short' && 'freeBytes' in probe) {
    state.sizing.learnt();
    const words = waveWords(folder, probe.freeBytes, wave);
    run.stopWith(
      { kind: 'disk_refuses', code: 'ENOSPC', folder, message: `${words}: free some space` },
      `stopping: ${words}. No new submissions; jobs in flight are still watched and saved while there is room. Free some space, then re-run (nothing is paid again)`,
    );
  } else {
    // The folder refused the probe itself (or the size is still unknown): a refusal stops the run
    // as a failed save would; anything else is judged again at the next saved file.
    state.sizing.stillGuessed();
    const refusal = 'step' in probe ? storeRefusal(probe.code ?? undefined, folder) : null;
    if (refusal) run.diskRefused(refusal);
  }
}
