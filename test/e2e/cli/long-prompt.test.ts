import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';

/**
 * A prompt longer than a person would type is warned about where it was written (docs/manifest.md,
 * "Prompts"), and still sent: the service decides what it accepts.
 */
describe('a huge prompt', () => {
  it('warns above 10,000 characters with file and line, in plan; 10,000 pass quietly, and the run sends it', async () => {
    const long = `${'a slow pan over the sea. '.repeat(7_920)}`.trim(); // 197,999 characters, as a cell reads
    const rows = `id,prompt\nfine,${'x'.repeat(10_000)}\nhuge,${long}\n`;
    const dir = tempProject({
      'batch.yaml': 'version: 1\nname: long\ninput: {seconds: 2, definition: 480p}\nitems_from: rows.csv\n',
      'rows.csv': rows,
    });
    const warning =
      "rows.csv:3:2: items_from[1].prompt: the prompt of item 'huge' is 197,999 characters, more than 10,000: " +
      "it is sent as it is (the service decides what it accepts), and each saved file's sidecar holds it whole";
    const plan = await runCli(['plan', 'batch.yaml'], { cwd: dir });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout + plan.stderr).toContain(warning);
    expect(plan.stdout + plan.stderr).not.toContain('item `fine`');
    // Sent as it is: the service decides.
    const ran = await runCli(['run', 'batch.yaml', '--sandbox', '--poll-interval', '0.1'], { cwd: dir });
    expect(ran.code, ran.stderr).toBe(0);
  });
});
