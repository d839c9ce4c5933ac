import { describe, expect, it } from 'vitest';
import { commandLine } from '../../src/cli/batch-options.js';

describe('commandLine: the next command to type', () => {
  it('names a batch by its manifest, or by --batch and --output-dir for a runner without one', () => {
    expect(commandLine('run', 'my batch.yaml', { ledger: 'l.sqlite' })).toBe(
      "mediabatch run 'my batch.yaml' --ledger l.sqlite",
    );
    expect(
      commandLine('run', undefined, {
        batch: 'shots',
        'output-dir': '/mnt/render/out/shots',
        ledger: 'postgres://render@db/batches',
      }),
    ).toBe(
      'mediabatch run --batch shots --output-dir /mnt/render/out/shots --ledger postgres://render@db/batches',
    );
  });

  it("never shows a database URL's password (PGPASSWORD gives it again)", () => {
    const line = commandLine('status', undefined, {
      batch: 'shots',
      ledger: 'postgres://render:s3cr%40t@db:5432/b',
    });
    expect(line).toBe('mediabatch status --batch shots --ledger postgres://render@db:5432/b');
  });
});
