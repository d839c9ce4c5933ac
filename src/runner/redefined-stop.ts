import { definitionOf, diffDefinitions, parseDefinition } from '../manifest/definition.js';
import { redefinedStopWords } from './definition-words.js';
import type { RunContext } from './run-context.js';

/**
 * A shared batch got a new revision of its definition while this run worked on an older one
 * (admission refused it, pg-claims.ts): the run stops submitting, watches and saves what it has in
 * flight, and says what differs in the words of the refusal a run started now would meet.
 */
export async function stopRedefined(run: RunContext, revision: number): Promise<void> {
  const { ledger, manifest } = run.deps;
  const started = run.options.definition;
  const current = (await ledger.definitions?.current()) ?? null;
  const diff =
    current === null
      ? { settings: [], added: [], removed: [], changed: [] }
      : diffDefinitions(parseDefinition(current.definition), definitionOf(manifest));
  const message = redefinedStopWords(
    diff,
    { batch: manifest.name, ledger: started?.ledger ?? ledger.path, revision: current?.revision ?? revision },
    started?.revision ?? 0,
  );
  run.stopWith({ kind: 'definition_differs', revision: current?.revision ?? revision, message }, message);
}
