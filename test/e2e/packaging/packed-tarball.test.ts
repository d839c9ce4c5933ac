import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../support/temp.js';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '../../..');
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');

/**
 * What a user gets from `npm pack`: the build the suite's global set-up made from an empty dist/
 * (as `npm run build` does, the command bundled with its code cache), installed into an empty
 * project offline, then used as a command, as a typed import, and through the documented example
 * against the sandbox.
 */
describe('the packed tarball on a fresh machine', () => {
  it('holds only the build, installs offline, and gives the command, the types and a working example', async () => {
    const tarball = await packTheBuild();
    const listing = (await run('tar', ['-tzf', tarball])).stdout.trim().split('\n');
    expect(listing).toContain('package/dist/index.js');
    expect(listing).toContain('package/dist/index.d.ts');
    expect(listing).toContain('package/dist/cli/main.js');
    expect(listing).toContain('package/dist/cli/main.cjs');
    expect(listing).toContain('package/dist/cli/main.cjs.cache');
    expect(listing).toContain('package/dist/render.js');
    // No tests, no sources, no source maps pointing outside, no ledgers or sandbox state.
    const stray = listing.filter((path) =>
      /[.]map$|^package\/(test|src)\/|[.]sqlite|[.]jsonl$|\.mediabatch/.test(path),
    );
    expect(stray).toEqual([]);

    const consumer = await installOffline(tarball);
    await expectReadmeApprovals(consumer);
    const bin = join(consumer, 'node_modules/.bin/mediabatch');
    const help = await run(bin, ['--help'], { cwd: consumer });
    expect(help.stdout).toContain('usage: mediabatch <command>');

    // The typed import: a consumer file compiles against dist/index.d.ts, and a misuse does not.
    writeFileSync(
      join(consumer, 'consumer.ts'),
      `import { loadManifest, run, type RunResult, type StatusDocument } from 'mediabatch';\n` +
        `import { jsonChunks, statusTextChunks } from 'mediabatch/render';\n` +
        `const manifest = loadManifest('batch.yaml');\n` +
        `const handle = run(manifest, { sandbox: true, only: ['a*'], pollIntervalSeconds: 5 });\n` +
        `handle.on('item', (event) => console.log(event.itemId, event.state));\n` +
        `const result: RunResult = await handle.result;\n` +
        `const doc: StatusDocument = result.status;\n` +
        `console.log(doc.totals.spent_usd satisfies string, result.outcome satisfies 'done' | 'not_done' | 'refused' | 'redefined' | 'interrupted');\n` +
        `console.log([...statusTextChunks(doc, doc.ledger)].join(''), [...jsonChunks(doc)].join(''));\n`,
    );
    cpSync(join(REPO, 'examples/nightly.ts'), join(consumer, 'nightly.ts'));
    writeFileSync(join(consumer, 'tsconfig.json'), consumerTsconfig(['consumer.ts', 'nightly.ts']));
    await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: consumer });
    writeFileSync(
      join(consumer, 'misuse.ts'),
      `import { run } from 'mediabatch';\nrun({} as never, { ledger: 42 });\n`,
    );
    writeFileSync(join(consumer, 'tsconfig.misuse.json'), consumerTsconfig(['misuse.ts']));
    const misuse = await run(process.execPath, [TSC, '-p', 'tsconfig.misuse.json'], { cwd: consumer }).catch(
      (error: { stdout: string }) => error,
    );
    expect(misuse.stdout).toContain("Type 'number' is not assignable to type 'string");
    // Private modules stay private: `exports` does not expose dist/**.
    const deep = await run(process.execPath, ['-e', "import('mediabatch/dist/lib/common.js')"], {
      cwd: consumer,
    }).catch((error: { stderr: string }) => error);
    expect(deep.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
    // The second entry point, mediabatch/render, renders what the first returns, as the CLI prints it.
    const rendered = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { jsonChunks } from 'mediabatch/render'; console.log([...jsonChunks({ totals: { done: 2 } })].join(''));",
      ],
      { cwd: consumer },
    );
    expect(JSON.parse(rendered.stdout)).toEqual({ totals: { done: 2 } });

    // The documented example, compiled above: out of time, it drains (exit 130); the next night resumes.
    const yaml = readFileSync(join(REPO, 'manifests/demo.yaml'), 'utf8').replace(
      'dir: ../out/demo',
      'dir: out',
    );
    writeFileSync(join(consumer, 'batch.yaml'), yaml);
    const nightly = (minutes: string) =>
      run(process.execPath, ['out-js/nightly.js', 'batch.yaml', minutes, 'night.log'], {
        cwd: consumer,
      }).catch((error: { code: number; stdout: string }) => error);
    const cut = await nightly('0.005');
    expect(cut).toMatchObject({ code: 130 });
    expect(cut.stdout).toMatch(/^demo: [0-5]\/6 done, spent \$\d+\.\d{6}, outcome interrupted\n$/);
    const whole = await nightly('5');
    expect(whole.stdout).toMatch(/^demo: 6\/6 done, spent \$\d+\.\d{6}, outcome done\n$/);
    const logged = readFileSync(join(consumer, 'night.log'), 'utf8');
    expect(logged).toContain('beach-sunrise: done');
    expect(logged).toContain('stop (draining)');
    // A sandbox run keeps its placeholder videos apart from real results, as `run --sandbox` does.
    expect(existsSync(join(consumer, 'sandbox/out/beach-sunrise.mp4'))).toBe(true);
  }, 180_000);
});

describe('install scripts approved for npm 12 (allowScripts)', () => {
  it('pins every package of the lockfile with an install script, each at its locked, resolved version', () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
    const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8'));
    const scripted = Object.entries<{ version: string; hasInstallScript?: boolean; resolved?: string }>(
      lock.packages,
    ).filter(([path, entry]) => path.startsWith('node_modules/') && entry.hasInstallScript);
    const pins = scripted.map(([path, entry]) => `${path.slice('node_modules/'.length)}@${entry.version}`);
    expect(Object.keys(pkg.allowScripts).sort()).toEqual(pins.sort());
    expect(Object.values(pkg.allowScripts).every((allowed) => allowed === true)).toBe(true);
    // A pin is matched through the lockfile's resolved URL: without one, npm ci warns again.
    for (const [path, entry] of scripted)
      expect(entry.resolved, path).toMatch(/^https:\/\/registry\.npmjs\.org\//);
  });
});

/**
 * The README's approval is all a consumer's project needs: before it, npm lists exactly the
 * packages the README names as having install scripts not covered by allowScripts; after the
 * README's command, none.
 */
async function expectReadmeApprovals(consumer: string): Promise<void> {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const named = /^npm install-scripts approve (.+)$/m.exec(readme)?.[1]?.split(' ') ?? [];
  const pending = async () => {
    const listed = await run('npm', ['install-scripts', 'ls'], { cwd: consumer });
    // mediabatch itself comes from a file here, whose `prepare` npm counts; from the registry it does not.
    return [...listed.stdout.matchAll(/^ {2}(\S+)@\d\S* \(/gm)]
      .map((match) => match[1])
      .filter((name) => name !== 'mediabatch');
  };
  expect(named.length).toBeGreaterThan(0);
  expect((await pending()).sort()).toEqual([...named].sort());
  await run('npm', ['install-scripts', 'approve', ...named], { cwd: consumer });
  expect(await pending()).toEqual([]);
  expect(
    Object.keys(JSON.parse(readFileSync(join(consumer, 'package.json'), 'utf8')).allowScripts),
  ).toHaveLength(named.length);
}

/** tsc over a fresh copy of src/ into a staging folder, then `npm pack` there (no scripts). */
async function packTheBuild(): Promise<string> {
  const stage = tempDir('mediabatch-pack-');
  cpSync(join(REPO, 'dist'), join(stage, 'dist'), { recursive: true });
  for (const file of ['package.json', 'README.md']) cpSync(join(REPO, file), join(stage, file));
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', stage], {
    cwd: stage,
  });
  return join(stage, JSON.parse(packed.stdout)[0].filename);
}

/**
 * `npm ci --prefer-offline` of the tarball plus the runtime part of the repo's own lockfile: every
 * dependency the repo's own `npm ci` put in the npm cache comes from there; only an entry that
 * cache lacks (a package added to the lockfile by `npm install` on a machine whose cache predates
 * it) is fetched from the registry. better-sqlite3's native addon would be fetched or compiled by
 * its install script, so scripts are off and the repo's build is copied.
 */
async function installOffline(tarball: string): Promise<string> {
  const consumer = tempDir('mediabatch-consumer-');
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8'));
  const own = lock.packages[''];
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', dependencies: { mediabatch: `file:${tarball}` } },
    'node_modules/mediabatch': {
      version: own.version,
      resolved: `file:${tarball}`,
      dependencies: own.dependencies,
      bin: own.bin,
    },
  };
  for (const [path, entry] of Object.entries<{ dev?: boolean; link?: boolean }>(lock.packages))
    if (path.startsWith('node_modules/') && !entry.dev && !entry.link) packages[path] = entry;
  const pkg = {
    name: 'consumer',
    private: true,
    type: 'module',
    dependencies: { mediabatch: `file:${tarball}` },
  };
  writeFileSync(join(consumer, 'package.json'), JSON.stringify(pkg));
  writeFileSync(
    join(consumer, 'package-lock.json'),
    JSON.stringify({ name: 'consumer', lockfileVersion: 3, requires: true, packages }),
  );
  await run('npm', ['ci', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: consumer,
  });
  const addon = 'node_modules/better-sqlite3/build/Release';
  mkdirSync(join(consumer, addon), { recursive: true });
  cpSync(join(REPO, addon, 'better_sqlite3.node'), join(consumer, addon, 'better_sqlite3.node'));
  return consumer;
}

/**
 * A strict NodeNext consumer as `tsc --init` makes one (skipLibCheck: internal declarations name
 * better-sqlite3's types, which the public surface never exposes); @types/node from the repo, as a
 * consumer would have its own.
 */
function consumerTsconfig(files: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(REPO, 'node_modules/@types')],
      outDir: 'out-js',
    },
    files,
  });
}
