/**
 * A prompt longer than a person would type (docs/manifest.md, "Prompts"): most likely a file's
 * whole text pasted into a cell, or a variable bound to the wrong column. It is sent as it is,
 * since the service decides what it accepts, but `plan` and `run` warn where it was written.
 */
import type { ProblemList, Source } from './problems.js';
import type { ManifestItem } from './types.js';

/** Characters: about four pages of text, ten times the longest prompt the examples use. */
const LONG_PROMPT_CHARS = 10_000;

/** One warning per place a prompt was written (a matrix or variants share it), at the prompt. */
export function noteLongPrompts(
  items: readonly ManifestItem[],
  sources: readonly Source[],
  warnings: ProblemList,
): void {
  const seen = new Set<Source>();
  items.forEach((item, index) => {
    const source = sources[index];
    const prompt = item.input.prompt;
    if (source === undefined || seen.has(source) || typeof prompt !== 'string') return;
    if (prompt.length <= LONG_PROMPT_CHARS) return;
    seen.add(source);
    const chars = prompt.length.toLocaleString('en-US');
    warnings.at(
      source,
      ['prompt'],
      `the prompt of item '${item.id}' is ${chars} characters, more than ${LONG_PROMPT_CHARS.toLocaleString('en-US')}: ` +
        "it is sent as it is (the service decides what it accepts), and each saved file's sidecar holds it whole",
    );
  });
}
