import type { DefinitionStanding } from '../../batch/definition/batch-definition.js';
import type { PlanDocument } from '../../batch/plan/plan-report.js';
import { differenceWords } from '../../runner/definition-words.js';

/** What `plan` says of the batch's definition: run would refuse a manifest that differs, unless `redefine`. */
export function planDefinition(
  standing: DefinitionStanding,
  redefine: boolean,
): { definition?: NonNullable<PlanDocument['definition']> } {
  switch (standing.kind) {
    case 'none':
      return {};
    case 'first':
      return { definition: { state: 'first', revision: null, message: null } };
    case 'same':
      return { definition: { state: 'same', revision: standing.revision, message: null } };
    case 'differs':
      return {
        definition: redefine
          ? {
              state: 'redefine',
              revision: standing.revision + 1,
              message:
                `\`redefine\`: run would make this manifest revision ${standing.revision + 1} of the batch's definition ` +
                `(${differenceWords(standing.diff).join('; ')}); runners on revision ${standing.revision} would stop submitting`,
            }
          : {
              state: 'differs',
              revision: standing.revision,
              message: `run would refuse this manifest (definition_differs): ${standing.message}`,
            },
      };
  }
}
