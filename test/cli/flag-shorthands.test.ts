import { describe, expect, it } from 'vitest';
import { parseCommandArgs } from '../../src/cli/parse-args.js';

const values = (command: 'run' | 'report', argv: string[]) => {
  const parsed = parseCommandArgs(command, argv);
  if (parsed.help) throw new Error('unexpected help');
  return { ...parsed.values, positionals: parsed.positionals };
};

describe('flag shorthands', () => {
  it('--redo takes every word up to the next option', () => {
    expect(values('run', ['m.yaml', '--redo', 'a', 'b', 'c', '--json'])).toMatchObject({
      redo: ['a', 'b', 'c'],
      json: true,
      positionals: ['m.yaml'],
    });
    expect(values('run', ['m.yaml', '--redo', '@redo.txt'])).toMatchObject({ redo: ['@redo.txt'] });
    expect(values('run', ['m.yaml', '--redo', 'a', '--sandbox', '--redo', 'b'])).toMatchObject({
      redo: ['a', 'b'],
      sandbox: true,
    });
  });

  it('--html without a file (last, or before another option) means the default page', () => {
    expect(values('report', ['m.yaml', '--html'])).toMatchObject({ html: '', positionals: ['m.yaml'] });
    expect(values('report', ['m.yaml', '--html', '--ledger', 'l.sqlite'])).toMatchObject({
      html: '',
      ledger: 'l.sqlite',
    });
    expect(values('report', ['m.yaml', '--html', 'r.html'])).toMatchObject({ html: 'r.html' });
    expect(values('report', ['m.yaml'])).toMatchObject({ html: undefined });
  });
});
