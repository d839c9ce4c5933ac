import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';

const head = 'version: 1\nname: cols\ninput: {seconds: 2, definition: 480p}\n';

/**
 * `input.NAME` columns of an items file are input fields (docs/manifest.md, "Items from a file"),
 * as `vars.NAME` columns are variables; a near miss is refused with the nearest form, located.
 */
describe('input.NAME columns', () => {
  it('a CSV column input.seconds is the input field seconds, sent as such', async () => {
    const dir = tempProject({
      'batch.yaml': `${head}items_from: rows.csv\n`,
      'rows.csv': 'id,prompt,input.seconds\na,shot a,4\n',
    });
    const plan = await runCli(['plan', 'batch.yaml'], { cwd: dir });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout + plan.stderr).not.toContain('input.seconds');
    const ran = await runCli(['run', 'batch.yaml', '--sandbox', '--poll-interval', '0.1'], { cwd: dir });
    expect(ran.code, ran.stderr).toBe(0);
    const db = new Database(join(dir, '.mediabatch', 'sandbox', 'cols.sqlite'), { readonly: true });
    const [row] = db.prepare('SELECT request_body FROM attempts').all() as Array<{ request_body: string }>;
    db.close();
    const body = JSON.parse(row!.request_body) as { input: Record<string, unknown> };
    expect(body.input).toMatchObject({ seconds: 4, definition: '480p', prompt: 'shot a' });
    expect(Object.keys(body.input)).not.toContain('input.seconds');
  });

  it('near misses name the nearest field at file, line and column; a JSON line is told to nest', async () => {
    const dir = tempProject({
      'batch.yaml': `${head}items_from: rows.csv\n`,
      'rows.csv': 'id,prompt,input.secnds,inpt.definition\na,shot a,4,720p\n',
      'lines.yaml': `${head}items_from: rows.jsonl\n`,
      'rows.jsonl': '{"id": "a", "prompt": "shot a", "input.seconds": 4}\n',
    });
    const csv = await runCli(['plan', 'batch.yaml'], { cwd: dir });
    expect(csv.code).toBe(2);
    const file = join(dir, 'rows.csv');
    expect(csv.stderr).toContain(
      `${file}:1:3: column 'input.secnds': unknown input field 'secnds', did you mean 'input.seconds'?`,
    );
    expect(csv.stderr).toContain(
      `${file}:1:4: column 'inpt.definition' is neither an input field nor a variable, did you mean 'input.definition'?`,
    );
    const jsonl = await runCli(['plan', 'lines.yaml'], { cwd: dir });
    expect(jsonl.code).toBe(2);
    expect(jsonl.stderr).toContain(
      `${join(dir, 'rows.jsonl')}:1:33: items_from[0]["input.seconds"]: unknown field 'input.seconds': a JSON line nests it, as {"input": {"seconds": ...}}`,
    );
  });
});
