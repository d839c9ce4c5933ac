import { keepTakes } from '../../index.js';
import { renderKept } from '../../render.js';
import { openBatch } from '../batch-options.js';
import type { Command } from '../io.js';

/** `mediabatch keep <manifest> ID:VARIANT[.TAKE]... | @FILE`: the library records the keepers, this says which. */
export const keepCommand: Command<'keep'> = async ({ values, positionals }, io) => {
  const { manifest, options } = await openBatch({ values, positionals }, io, 'keep');
  const entries = values.batch === undefined ? positionals.slice(1) : positionals;
  io.stdout.write(renderKept(await keepTakes(manifest, { ...options, entries }), io.cwd));
  return 'done';
};
