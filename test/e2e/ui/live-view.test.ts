import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { CLI } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { startInTmux, tmuxAvailable } from '../../support/tmux.js';

const EVENT_LINE = /^ {2}\d\d:\d\d:\d\d {2}(.+)$/;
const hasTmux = tmuxAvailable();
const inCi = process.env.CI === 'true';

let sandbox: SandboxHandle;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox.close();
});

let runs = 0;

async function runInTerminal(ids: string[]) {
  const items = ids.map((id) => `  - {id: ${id}, prompt: ${id} at dawn}`).join('\n');
  // Its own manifest name per run: the sandbox is shared, and a new ledger meeting another run's
  // jobs of the same manifest stops with the import hint (docs/import.md).
  const name = `live-${++runs}`;
  const p = project(name, manifestYaml(name, `items:\n${items}\n`));
  const ndjson = join(p.dir, 'events.ndjson');
  const argv = [process.execPath, CLI, 'run', p.manifest, '--poll-interval', '0.1', '--progress', 'ndjson'];
  const pane = startInTmux(argv, {
    cwd: p.dir,
    env: { ...cliEnv(sandbox), PATH: process.env.PATH ?? '' },
    stderrTo: ndjson,
  });
  onTestFinished(() => {
    pane.close();
    rmSync(p.dir, { recursive: true, force: true });
  });
  const screen = await pane.waitFor(/^EXIT=\d+$/m);
  const lines = screen.split('\n');
  return {
    lines,
    events: lines.flatMap((line) => EVENT_LINE.exec(line)?.[1] ?? []),
    streamed: streamedEvents(readFileSync(ndjson, 'utf8')),
  };
}

/** The same run's events from its --progress ndjson stream, worded as the live view words them. */
function streamedEvents(text: string): string[] {
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .flatMap((event) => {
      if (event.event === 'item')
        return [`${event.item}: ${event.state.replace('_', ' ')}${event.detail ? ` (${event.detail})` : ''}`];
      if (event.event === 'log')
        return [event.level === 'info' ? event.message : `${event.level}: ${event.message}`];
      return [];
    });
}

const count = (lines: string[], wanted: string) => lines.filter((line) => line === wanted).length;

describe.runIf(hasTmux)('the live view in a real terminal (tmux, 120x40)', () => {
  it('shows each event once, the panel once, then the summary', async () => {
    const { lines, events, streamed } = await runInTerminal(['alpha', 'bravo', 'charlie']);
    expect(events).toEqual(streamed);
    expect(lines).toContain('EXIT=0');
    expect(lines.filter((line) => line.startsWith('live-1 (3 items)'))).toEqual([
      expect.stringMatching(/^live-1 \(3 items\) {2}█{24} {2}3\/3 finished {2}took \d+s$/),
    ]);
    expect(count(lines, '  done 3   failed 0   over budget 0   expired 0   in flight 0   pending 0')).toBe(1);
    expect([...events].sort()).toEqual(
      ['alpha', 'bravo', 'charlie'].flatMap((id) => [`${id}: done`, `${id}: in flight`]).sort(),
    );
    expect(lines.filter((line) => line.startsWith('live-1: 3/3 done'))).toHaveLength(1);
  });

  it('keeps a short rolling list: the latest eight events, none twice', async () => {
    const ids = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
    const { lines, events, streamed } = await runInTerminal(ids);
    expect(lines).toContain('EXIT=0');
    expect(streamed).toHaveLength(12);
    expect(events).toEqual(streamed.slice(-8));
    expect(new Set(events).size).toBe(8);
    expect(lines.filter((line) => line.startsWith('recent:'))).toHaveLength(1);
  });
});

describe.runIf(!hasTmux)('the live view in a real terminal', () => {
  if (inCi) {
    it('needs tmux, which CI installs (apt-get install tmux)', () => {
      throw new Error('tmux is missing: the live-view test cannot run, and CI must run it');
    });
  } else {
    console.warn(
      'NOTICE: tmux is not installed, so the live-view terminal test is skipped (apt-get install tmux)',
    );
    it.skip('skipped: tmux is not installed (apt-get install tmux)', () => undefined);
  }
});
