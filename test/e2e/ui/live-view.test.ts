import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { CLI } from '../../support/cli.js';
import {
  cliEnv,
  manifestYaml,
  project,
  runAgainst,
  sandboxMoney,
  startClockedSandbox,
  statusJson,
  waitUntil,
} from '../../support/e2e.js';
import { startInTmux, tmuxAvailable } from '../../support/tmux.js';

/** An event under the generate phase's counts: `  12:00:01  alpha: done`. */
const EVENT_LINE = /^ {2}\d\d:\d\d:\d\d {2}(.+)$/;
/** What a half-drawn frame or a stray escape sequence leaves: ESC, CSI remains, spinner frames. */
const DEBRIS = /\u001b|\[\d*[A-Z]|\[\?25|[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]|◼/;
const hasTmux = tmuxAvailable();
const inCi = process.env.CI === 'true';

let sandbox: SandboxHandle;
/** Moves the sandbox's clock on: a job marked `[[run:60]]` ends only when a test says so. */
let advance: (seconds: number) => void;
beforeAll(async () => {
  ({ sandbox, advance } = await startClockedSandbox());
});
afterAll(async () => {
  await sandbox.close();
});

let runs = 0;

/** A project of its own per run: the sandbox is shared, and a new ledger meeting another run's jobs stops. */
function liveProject(ids: string[], head = '', prompt = (id: string) => `${id} at dawn`) {
  const items = ids.map((id) => `  - {id: ${id}, prompt: "${prompt(id)}"}`).join('\n');
  const name = `live-${++runs}`;
  return { name, p: project(name, manifestYaml(name, `${head}items:\n${items}\n`)) };
}

function runInTerminal(dir: string, manifest: string, env: Record<string, string> = {}) {
  const ndjson = join(dir, 'events.ndjson');
  const argv = [process.execPath, CLI, 'run', manifest, '--poll-interval', '0.1', '--progress', 'ndjson'];
  const pane = startInTmux(argv, {
    cwd: dir,
    // CI and NO_COLOR empty: the view is drawn, whatever the test runner's own environment says.
    env: { ...cliEnv(sandbox), PATH: process.env.PATH ?? '', CI: '', NO_COLOR: '', ...env },
    columns: 110,
    rows: 30,
    stderrTo: ndjson,
  });
  onTestFinished(() => {
    pane.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { pane, streamed: () => streamedEvents(readFileSync(ndjson, 'utf8')) };
}

/** The same run's events from its --progress ndjson stream, worded as the view words them. */
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

const eventsOn = (lines: string[]) => lines.flatMap((line) => EVENT_LINE.exec(line)?.[1] ?? []);
const count = (lines: string[], wanted: string) => lines.filter((line) => line === wanted).length;
const spentOf = (name: string) => {
  const money = sandboxMoney(sandbox, name);
  return money.chargedMicros - money.refundedMicros;
};

describe.runIf(hasTmux)('the live view in a real terminal (tmux, 110x30)', () => {
  it("leaves each phase's end state, the counts, the spend and each event once, and no debris", async () => {
    const { name, p } = liveProject(['alpha', 'bravo', 'charlie']);
    const { pane, streamed } = runInTerminal(p.dir, p.manifest);
    const lines = (await pane.waitFor(/^EXIT=\d+$/m)).split('\n');
    expect(lines).toContain('EXIT=0');
    expect(
      lines.filter((line) => line.startsWith('✔ Checked the service at http://127.0.0.1:')),
    ).toHaveLength(1);
    expect(lines.filter((line) => line.includes(`${name} (3 items)`))).toEqual([
      expect.stringMatching(new RegExp(`^✔ Generated ${name} \\(3 items\\): 3/3 finished, took \\d+s$`)),
    ]);
    expect(count(lines, '  done 3 · failed 0 · over budget 0 · expired 0 · in flight 0 · pending 0')).toBe(1);
    const spent = (spentOf(name) / 1e6).toFixed(2);
    expect(lines.filter((line) => line.startsWith('  slots '))).toEqual([
      `  slots 0/3 in use · spent $${spent} (no budget)`,
    ]);
    expect(count(lines, '✔ Saved the files of 3 items')).toBe(1);
    const events = eventsOn(lines);
    expect(events).toEqual(streamed());
    expect([...events].sort()).toEqual(
      ['alpha', 'bravo', 'charlie'].flatMap((id) => [`${id}: done`, `${id}: in flight`]).sort(),
    );
    expect(lines.filter((line) => DEBRIS.test(line))).toEqual([]);
    expect(lines.filter((line) => line.startsWith(`${name}: 3/3 done`))).toHaveLength(1);
    expect(lines).toContain(`spent $${spent} (refunded $0.00)`);
    expect(pane.cursorShown()).toBe(true);
  });

  it('keeps a short rolling list: the latest eight events, none twice', async () => {
    const { p } = liveProject(['a1', 'a2', 'a3', 'a4', 'a5', 'a6']);
    const { pane, streamed } = runInTerminal(p.dir, p.manifest);
    const lines = (await pane.waitFor(/^EXIT=\d+$/m)).split('\n');
    expect(lines).toContain('EXIT=0');
    expect(streamed()).toHaveLength(12);
    const events = eventsOn(lines);
    expect(events).toEqual(streamed().slice(-8));
    expect(new Set(events).size).toBe(8);
  });

  it('ends a failed item and a budget stop as failed listr2 tasks, with the counts of the ledger', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    const { name, p } = liveProject(ids, 'budget_usd: "0.20"\nmax_cost_usd: "0.05"\n', (id) =>
      id === 'b' ? 'b at dawn [[fail:content_rejected]]' : `${id} at dawn`,
    );
    const { pane, streamed } = runInTerminal(p.dir, p.manifest);
    const lines = (await pane.waitFor(/^EXIT=\d+$/m)).split('\n');
    expect(lines).toContain('EXIT=1');
    const { totals } = await statusJson(p);
    expect(totals.failed).toBe(1);
    expect(totals.budget_exceeded).toBeGreaterThan(0);
    expect(lines.filter((line) => line.includes(`${name} (6 items)`))).toEqual([
      expect.stringMatching(new RegExp(`^⚠ Generated ${name} \\(6 items\\): 6/6 finished, took \\d+s$`)),
    ]);
    expect(
      count(
        lines,
        `  done ${totals.done} · failed 1 · over budget ${totals.budget_exceeded} · expired 0 · in flight 0 · pending 0`,
      ),
    ).toBe(1);
    expect(lines.filter((line) => line.startsWith('  ✖ '))).toEqual([
      expect.stringMatching(/^ {2}✖ b: failed \(content_rejected: .+\)$/),
      // Then the first item's own words, as long as the terminal is wide: what it reserves, the prices seen.
      expect.stringMatching(
        new RegExp(
          `^ {2}✖ stopped by the budget: ${totals.budget_exceeded} items? did not fit in budget_usd(: |; the first, )`,
        ),
      ),
    ]);
    expect(lines).toContain(
      `  slots 0/3 in use · spent $${(spentOf(name) / 1e6).toFixed(2)} of $0.20 (${Math.floor(spentOf(name) / 2000)}%)`,
    );
    // A budget refusal's words are longer than the 110 columns: the view cuts them with an ellipsis.
    const cut = (event: string, shown: string) =>
      shown.endsWith('…') ? `${event.slice(0, shown.length - 1)}…` : event;
    const shown = eventsOn(lines);
    expect(shown).toEqual(
      streamed()
        .slice(-8)
        .map((event, i) => cut(event, shown[i] ?? '')),
    );
    expect(lines.filter((line) => DEBRIS.test(line))).toEqual([]);
  });

  it('drains on Ctrl-C as before and leaves a clean prompt', async () => {
    const { name, p } = liveProject(['slow1', 'slow2', 'later'], 'concurrency: 2\n', (id) =>
      id === 'later' ? 'later at dawn' : `${id} at dawn [[run:60]]`,
    );
    const { pane, streamed } = runInTerminal(p.dir, p.manifest);
    await pane.waitFor(/slow2: in flight \d+s/);
    pane.sendKeys('C-c');
    // The slow jobs end once the run has stopped submitting, not before: later is never sent.
    await waitUntil(() => streamed().some((event) => event.includes('stopping')), 20_000, 'the stop');
    advance(61);
    const lines = (await pane.waitFor(/^EXIT=\d+$/m)).split('\n');
    expect(lines).toContain('EXIT=130');
    expect(
      count(
        lines,
        '  ↓ stopped by Ctrl-C: nothing new was submitted; jobs in flight were finished and saved',
      ),
    ).toBe(1);
    expect(lines.filter((line) => line.includes(`${name} (3 items)`))).toEqual([
      expect.stringMatching(new RegExp(`^✔ Generated ${name} \\(3 items\\): 2/3 finished, took \\d+s$`)),
    ]);
    expect(lines).toContain(
      'interrupted or unfinished: re-run the same command to resume; nothing is paid twice.',
    );
    const { totals } = await statusJson(p);
    expect(totals).toMatchObject({ done: 2, pending: 1 });
    expect(lines.filter((line) => DEBRIS.test(line))).toEqual([]);
    // The prompt's line starts at the left edge, right under the summary: no half-drawn frame.
    expect(lines.at(-1)).toBe('EXIT=130');
    expect(pane.cursorShown()).toBe(true);
  });

  it('prints the plain lines instead under CI=true and with NO_COLOR, even in a terminal', async () => {
    for (const env of [{ CI: 'true' }, { NO_COLOR: '1' }] as Record<string, string>[]) {
      const { p } = liveProject(['plain1']);
      const { pane } = runInTerminal(p.dir, p.manifest, env);
      const lines = (await pane.waitFor(/^EXIT=\d+$/m)).split('\n');
      expect(lines).toContain('EXIT=0');
      expect(lines.filter((line) => /^\[\d\d:\d\d:\d\d\] plain1: /.test(line))).toEqual([
        expect.stringMatching(/ plain1: in flight$/),
        expect.stringMatching(/ plain1: done$/),
      ]);
      expect(lines.filter((line) => /[✔✖⚠↓]/.test(line))).toEqual([]);
    }
  });
});

describe('run in a pipe', () => {
  it('prints the plain lines, byte for byte as before: the events with their times, then the summary and the gallery', async () => {
    const { name, p } = liveProject(['pipe1', 'pipe2']);
    onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
    const result = await runAgainst(sandbox, p, ['--progress', 'ndjson']);
    expect(result.code).toBe(0);
    const events = streamedEvents(result.stderr);
    const stamped = result.stdout.split('\n').filter((line) => /^\[\d\d:\d\d:\d\d\] /.test(line));
    // Every line of the run is one event, or the periodic one-line summary of the counts.
    expect(stamped.map((line) => line.slice(11)).filter((line) => !/^\d+\/2 finished, /.test(line))).toEqual(
      events,
    );
    const spent = (spentOf(name) / 1e6).toFixed(2);
    expect(result.stdout).toBe(
      [
        'Plan: 2 new; no upper bound (no price seen yet for this model and input).',
        ...stamped,
        '',
        `${name}: 2/2 done, 0 failed, 0 over budget, 0 expired, 0 unfinished`,
        `spent $${spent} (refunded $0.00)`,
        `ledger: ${join(p.dir, '.mediabatch', `${name}.sqlite`)}`,
        // Last, what to open next: the gallery the run wrote (docs/gallery.md, "After every run").
        `gallery: out/${name}/index.html`,
        '',
      ].join('\n'),
    );
    expect(result.stdout).not.toMatch(/\u001b/);
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
