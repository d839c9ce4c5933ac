import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Each database's migrations as numbered SQL files, one folder per database (migrations/sqlite/,
 * migrations/postgres/): `000007-keepers.sql` is the step to version 7. A file is never edited
 * once released, not even its whitespace (SQLite keeps each CREATE's text as written): add the
 * next number. They ship as files beside the code (the build copies them into dist/, see
 * scripts/build.mjs); the folder is named from `../ledger/` so that one URL finds it
 * from src/ledger/, dist/ledger/ and the command's one bundled file, dist/cli/main.cjs.
 */
const FOLDER = new URL('../ledger/migrations/', import.meta.url);

const FILE_NAME = /^(\d{6})-[a-z0-9-]+\.sql$/;

/** One version's step: its SQL file, read as it is applied, or a step written in code. */
export type MigrationStep<Code> = { file: string } | { code: Code };

/**
 * The steps of `folder`'s migrations in version order, the first bringing an empty database to
 * version 1. `code`: the versions whose step needs the rows themselves in JavaScript (by number;
 * no file has them). A gap or a number given twice is refused: the versions are the ledgers'.
 */
export function migrationSteps(folder: 'sqlite' | 'postgres'): Array<{ file: string }>;
export function migrationSteps<Code>(
  folder: 'sqlite' | 'postgres',
  code: Readonly<Record<number, Code>>,
): MigrationStep<Code>[];
export function migrationSteps<Code>(
  folder: 'sqlite' | 'postgres',
  code: Readonly<Record<number, Code>> = {},
): MigrationStep<Code>[] {
  const dir = new URL(`${folder}/`, FOLDER);
  const steps: Array<MigrationStep<Code> | undefined> = [];
  const place = (version: number, step: MigrationStep<Code>) => {
    if (steps[version - 1] !== undefined) throw new Error(`${folder} migration ${version} is given twice`);
    steps[version - 1] = step;
  };
  for (const name of readdirSync(dir).sort()) {
    const number = FILE_NAME.exec(name)?.[1];
    if (number === undefined)
      throw new Error(`${folder} migration file ${name} is not named NNNNNN-what.sql`);
    place(Number(number), { file: fileURLToPath(new URL(name, dir)) });
  }
  for (const [version, step] of Object.entries(code)) place(Number(version), { code: step });
  const missing = Array.from(steps.keys()).find((index) => steps[index] === undefined);
  if (missing !== undefined) throw new Error(`${folder} migration ${missing + 1} is missing`);
  return steps as MigrationStep<Code>[];
}

/** A step's SQL, as its file holds it: sent whole, its statements together. */
export function migrationSql(step: { file: string }): string {
  return readFileSync(step.file, 'utf8');
}
