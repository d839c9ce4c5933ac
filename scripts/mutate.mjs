// `npm run mutate`: Stryker over the pure core and the download checks (stryker.config.mjs).
// Stryker's own CLI refuses Node 20 at start-up, though the mutation run itself works on it (this
// project targets Node 20.18+). So the run is started through Stryker's API, whose module sits
// behind the package's `exports` map and is reached by its file path.
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { Stryker } = await import(`${root}node_modules/@stryker-mutator/core/dist/src/stryker.js`);
const { default: options } = await import(`${root}stryker.config.mjs`);

const results = await new Stryker({ ...options, configFile: 'stryker.config.mjs' }).runMutationTest();
const killed = results.filter((mutant) => ['Killed', 'Timeout'].includes(mutant.status)).length;
const counted = results.filter(
  (mutant) => !['Ignored', 'CompileError', 'RuntimeError'].includes(mutant.status),
);
const score = counted.length === 0 ? 100 : (100 * killed) / counted.length;
console.log(`mutation score ${score.toFixed(2)}% (${killed} of ${counted.length} mutants killed)`);
process.exitCode = score >= options.thresholds.break ? 0 : 1;
