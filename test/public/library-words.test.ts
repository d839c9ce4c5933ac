import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWords } from '../../src/cli/words.js';
import {
  loadDefinition,
  loadManifest,
  type Manifest,
  type Notice,
  run,
  type SandboxHandle,
  startSandbox,
  UserError,
  writeGallery,
} from '../../src/index.js';
import { fastConfig, manifestYaml, project } from '../support/e2e.js';

/**
 * The library speaks data: a refusal carries its `code` and the fields that explain it, a notice
 * is `{ code, message, fields }`, and no message names a command-line flag, Ctrl-C, the CLI's
 * name or an exit code (the CLI's, from the code). The CLI words the same refusal with its flags
 * (`cliWords`), as it always has.
 */
const CLI_WORDS = /--[a-z]|Ctrl-C|mediabatch run:|\bexit \d|exit code/;

let sandbox: SandboxHandle;
let manifest: Manifest;
beforeAll(async () => {
  sandbox = await startSandbox(fastConfig(), { port: 0 });
  const p = project(
    'words',
    `${manifestYaml('words')}items:\n  - {id: a, prompt: one}\n  - {id: b, prompt: two}\n`,
  );
  manifest = loadManifest(p.manifest);
});
afterAll(() => sandbox.close());

async function refusal(action: () => unknown): Promise<UserError> {
  try {
    await action();
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).not.toMatch(CLI_WORDS);
    return error as UserError;
  }
  throw new Error('expected a refusal');
}

const live = () => ({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, env: {} });

describe('refusals in API terms, worded with flags by the CLI', () => {
  const cases: Array<[string, () => unknown, string, Record<string, unknown>, string]> = [
    [
      'only names no item',
      () => run(manifest, { ...live(), only: ['zz'] }).result,
      'selection_empty',
      { option: 'only', pattern: 'zz' },
      '--only zz matches no item of words',
    ],
    [
      'redo outside only',
      () => run(manifest, { ...live(), only: ['a'], redo: ['b'] }).result,
      'selection_empty',
      { option: 'redo', ids: ['b'], only: ['a'] },
      '--redo b: not among the items --only selects, so the redo would not happen; add it to --only or drop --only',
    ],
    [
      'redo of an item not done',
      () => run(manifest, { ...live(), redo: ['a'] }).result,
      'selection_empty',
      { option: 'redo', ids: ['a'], state: 'pending' },
      '--redo a: the item is pending, not done',
    ],
    [
      'redo of no item',
      () => run(manifest, { ...live(), redo: ['q'] }).result,
      'selection_empty',
      { option: 'redo', ids: ['q'], state: null },
      "--redo q: no item 'q' in words",
    ],
    [
      'no service',
      () => run(manifest, { env: {} }).result,
      'service_missing',
      { options: ['baseUrl', 'sandbox'] },
      'pass --base-url URL (or set MEDIAGEN_BASE_URL), or try the manifest offline with --sandbox',
    ],
    [
      'a base URL that is no URL',
      () => run(manifest, { baseUrl: 'ftp://x', apiKey: 'k', env: {} }).result,
      'setting_invalid',
      { option: 'baseUrl', value: 'ftp://x' },
      '--base-url / MEDIAGEN_BASE_URL is not an http(s) URL: ftp://x',
    ],
    [
      'a notify URL that is no URL',
      () => run(manifest, { ...live(), notify: 'ftp://x' }).result,
      'setting_invalid',
      { option: 'notify', variable: 'MEDIABATCH_NOTIFY_URL' },
      '--notify / MEDIABATCH_NOTIFY_URL must be an http(s) URL',
    ],
    [
      'an onComplete command with an open quote',
      () => run(manifest, { ...live(), onComplete: 'echo a | cat' }).result,
      'invalid_usage',
      { option: 'onComplete' },
      '--on-complete "|" is shell syntax',
    ],
    [
      'a link lifetime for a local folder',
      () => writeGallery(manifest, { urlLifetimeSeconds: 3600, env: {} }),
      'target_refused',
      { option: 'urlLifetimeSeconds' },
      '--url-lifetime is for an s3:// output location',
    ],
    [
      'an s3:// page for a local folder',
      () => writeGallery(manifest, { to: 's3://b/k.html', env: {} }),
      'target_refused',
      { option: 'to', target: 's3://b/k.html' },
      '--html s3://b/k.html: the output location is a local folder',
    ],
    [
      'a batch by its name without a shared ledger',
      () => loadDefinition({ batch: 'words', ledger: 'words.sqlite', env: {} }),
      'invalid_option',
      { option: 'ledger' },
      'batch "words" is read from the definition a shared ledger stores: give --ledger, its postgres:// URL',
    ],
  ];

  for (const [name, action, code, fields, cli] of cases)
    it(name, async () => {
      const error = await refusal(action);
      expect(error.code).toBe(code);
      expect(error.fields).toMatchObject(fields);
      expect(cliWords(error)).toContain(cli);
    });
});

describe('notices', () => {
  it('retryFailed with nothing to retry is a notice with a code, in API terms', async () => {
    const handle = run(manifest, { ...live(), retryFailed: true, only: ['a'] });
    const notices: Notice[] = [];
    handle.on('notice', (notice) => notices.push(notice));
    await handle.result;
    expect(notices.map((notice) => notice.code)).toEqual(['retry_failed_none']);
    expect(notices[0]!.message).not.toMatch(CLI_WORDS);
    expect(cliWords(notices[0]!)).toBe('--retry-failed: no item failed for a final reason\n');
  });
});

describe('the library writes nothing to the console', () => {
  // Only the CLI (and its terminal views) prints; below it, words travel as errors, warnings and events.
  const root = resolve(import.meta.dirname, '../../src');
  const below = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter(
    (path) => path.endsWith('.ts') && !/^(cli|ui)[/\\]/.test(path),
  );

  it.each(below)('src/%s calls no console and writes to no process stream', (path) => {
    const code = readFileSync(join(root, path), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    expect(code).not.toMatch(/\bconsole\.|process\.(stdout|stderr)\b/);
  });
});
