import { type ChecksDocument, checkTakes } from '../../index.js';
import { openBatch } from '../batch-options.js';
import type { Command } from '../io.js';
import { cliWords } from '../words.js';

/** `mediabatch check <manifest>`: the library checks the saved takes again; this says what they came to. */
export const checkCommand: Command<'check'> = async ({ values, positionals }, io) => {
  const { manifest, options } = await openBatch({ values, positionals }, io, 'check');
  const document = await checkTakes(manifest, options);
  io.stdout.write(values.json ? `${JSON.stringify(document, null, 2)}\n` : cliWords(checksText(document)));
  return document.outcome;
};

function checksText(document: ChecksDocument): string {
  const { totals } = document;
  const lines = document.takes
    .filter((take) => take.outcome !== 'passed' || take.before === 'failed')
    .map((take) => {
      const was = take.before === null || take.before === take.outcome ? '' : ` (was ${take.before})`;
      const score = take.score === null ? '' : ` score ${take.score}`;
      return `  ${take.itemId} take ${take.take}: ${take.outcome}${was}${score}${take.reason ? `: ${take.reason}` : ''}`;
    });
  const head = `${document.manifest}: ${totals.checked} take(s) checked: ${totals.passed} passed, ${totals.failed} failed, ${totals.unchecked} unchecked`;
  const stopped = document.stopped
    ? [
        `stopped: ${document.stopped.message}; the takes after it were not checked. Fix the check and check again.`,
      ]
    : [];
  const next =
    totals.failed > 0
      ? [
          'The next `mediabatch run` buys a failed take again where the item has rerolls left; the others are left for you.',
        ]
      : [];
  return `${[head, ...lines, ...stopped, ...next].join('\n')}\n`;
}
