// `npm run mutate`: Stryker over the pure core and the download checks (stryker.config.mjs).
// The run is started through Stryker's API (pinned to 9.6.1, which accepts Node 20; docs/testing.md),
// whose module sits behind the package's `exports` map and is reached by its file path, so that
// the committed incremental file can be rewritten in a stable form below.
//
// The run is incremental: the committed incremental file holds the last results, and only mutants
// in changed code (or covered by changed tests) run again; the file is rewritten at the end.
//   MUTATE_FORCE=1    re-tests every mutant (and rewrites the incremental file from scratch).
//   MUTATE=a.ts,b.ts  only these files (names, not globs) or `file:line-range`s; such a
//                     partial run keeps its own incremental file under reports/, never the
//                     committed one, which must hold every mutated file.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { Stryker } = await import(`${root}node_modules/@stryker-mutator/core/dist/src/stryker.js`);
const { default: options, mutationGroups } = await import(`${root}stryker.config.mjs`);

const only = process.env.MUTATE?.split(',').filter(Boolean);
const run = only?.length
  ? { ...options, mutate: only, incrementalFile: 'reports/mutation/partial-incremental.json' }
  : { ...options, force: process.env.MUTATE_FORCE === '1' };
const relative = (fileName) => fileName.replace(root, '').replaceAll('\\', '/');
// Stryker carries over the stored results of files outside this run's `mutate` (a file taken out
// of the set, or left out of a partial run): they neither count nor stay in the committed file.
const scope = new Set(run.mutate.map((entry) => entry.replace(/:[\d-]+$/, '')));
const results = (await new Stryker({ ...run, configFile: 'stryker.config.mjs' }).runMutationTest()).filter(
  (mutant) => scope.has(relative(mutant.fileName)),
);
if (!only?.length) await keepPortable(options.incrementalFile);

/**
 * The committed incremental file keeps only what the next run reads (each file's source and
 * mutants, each test file's tests), in a stable order: Stryker also writes the machine's checkout
 * path, the configuration and each mutant's timing, and lists files and mutants in the order they
 * finished, so without this every run would rewrite the whole file.
 */
async function keepPortable(file) {
  const report = JSON.parse(await readFile(file, 'utf8'));
  const { testFiles, schemaVersion, thresholds } = report;
  const files = Object.fromEntries(Object.entries(report.files).filter(([name]) => scope.has(name)));
  const where = ({ location: { start, end } }) => [start.line, start.column, end.line, end.column];
  const before = (a, b) => {
    const [x, y] = [where(a), where(b)];
    const at = x.findIndex((value, i) => value !== y[i]);
    if (at >= 0) return x[at] - y[at];
    return `${a.mutatorName} ${a.replacement}`.localeCompare(`${b.mutatorName} ${b.replacement}`);
  };
  // Test ids follow the order the dry run found the tests in, which varies: number them by file
  // and place instead, and the mutants' references with them.
  const testId = new Map();
  const sortedTests = {};
  for (const name of Object.keys(testFiles).sort()) {
    const line = (test) => test.location?.start.line ?? 0;
    const tests = [...testFiles[name].tests]
      .sort((a, b) => line(a) - line(b) || a.name.localeCompare(b.name))
      .map((test) => {
        testId.set(test.id, String(testId.size));
        return { ...test, id: testId.get(test.id) };
      });
    sortedTests[name] = { ...testFiles[name], tests };
  }
  const renumber = (ids) =>
    ids?.map((old) => testId.get(old) ?? old).sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  let id = 0;
  const sortedFiles = {};
  for (const name of Object.keys(files).sort()) {
    const mutants = files[name].mutants
      .map(({ duration, statusReason, ...mutant }) => ({
        ...mutant,
        ...(mutant.coveredBy ? { coveredBy: renumber(mutant.coveredBy) } : {}),
        ...(mutant.killedBy ? { killedBy: renumber(mutant.killedBy) } : {}),
      }))
      .sort(before)
      .map((mutant) => ({ ...mutant, id: String(id++) }));
    sortedFiles[name] = { ...files[name], mutants };
  }
  const portable = { schemaVersion, thresholds, files: sortedFiles, testFiles: sortedTests };
  await writeFile(file, `${JSON.stringify(portable, null, 2)}\n`);
}

const DETECTED = ['Killed', 'Timeout'];
const UNCOUNTED = ['Ignored', 'CompileError', 'RuntimeError'];
/** Score of the mutants whose file passes `pick`: detected of counted, or null when none count. */
function score(pick) {
  const counted = results.filter((mutant) => pick(mutant.fileName) && !UNCOUNTED.includes(mutant.status));
  const killed = counted.filter((mutant) => DETECTED.includes(mutant.status)).length;
  return { killed, counted: counted.length, score: counted.length ? (100 * killed) / counted.length : null };
}

const files = [...new Set(results.map((mutant) => relative(mutant.fileName)))].sort();
console.log('\n| File | Score | Killed | Survived | No coverage |\n| - | - | - | - | - |');
for (const file of files) {
  const mine = results.filter((mutant) => relative(mutant.fileName) === file);
  const { score: value } = score((name) => relative(name) === file);
  const count = (status) => mine.filter((mutant) => status.includes(mutant.status)).length;
  console.log(
    `| \`${file}\` | ${value === null ? '-' : `${value.toFixed(2)}%`} | ${count(DETECTED)} | ${count(['Survived'])} | ${count(['NoCoverage'])} |`,
  );
}

const failures = [];
const overall = score(() => true);
console.log(
  `\nmutation score ${(overall.score ?? 100).toFixed(2)}% (${overall.killed} of ${overall.counted} mutants killed)`,
);
if ((overall.score ?? 100) < options.thresholds.break) failures.push('overall');
// Each group must hold the bar on its own: a strong group must not hide a weak one.
for (const [group, prefix] of Object.entries(mutationGroups)) {
  const part = score((name) => relative(name).startsWith(prefix));
  if (part.score === null) continue;
  console.log(`${group}: ${part.score.toFixed(2)}% (${part.killed} of ${part.counted})`);
  if (part.score < options.thresholds.break) failures.push(group);
}
if (failures.length > 0) {
  console.log(`below the break threshold of ${options.thresholds.break}%: ${failures.join(', ')}`);
  process.exitCode = 1;
}
