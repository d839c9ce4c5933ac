import { describe, expect, it } from 'vitest';
import type { FlagSpec } from '../../src/cli/flags.js';
import { parseCommandArgs, parseWithFlags } from '../../src/cli/parse-args.js';
import { UserError } from '../../src/errors.js';
import { exitCodeOfError } from '../../src/exit-codes.js';
import { closestMatch, editDistance } from '../../src/suggest.js';

/** Rows the real table does not have yet, to pin the parser's handling of every kind of flag. */
const ROWS: FlagSpec[] = [
  { name: 'only', multiple: true, value: 'ID', description: 'x', commands: [] },
  { name: 'progress', value: 'FORMAT', choices: ['ndjson'], description: 'x', commands: [] },
  { name: 'dry', description: 'x', commands: [] },
];
const parse = (argv: string[]) => parseWithFlags('demo', ROWS, { args: ['manifest'] }, argv);
const failure = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    expect(exitCodeOfError((error as UserError).code)).toBe(2);
    return (error as Error).message;
  }
  throw new Error('expected a UserError');
};

describe('parsing against the flag table', () => {
  it('fills defaults: false for switches, [] for repeatable flags, undefined for values', () => {
    expect(parse(['m.yaml'])).toEqual({
      help: false,
      values: { only: [], progress: undefined, dry: false },
      positionals: ['m.yaml'],
    });
  });

  it('collects a repeatable flag in order, in both spellings', () => {
    const parsed = parse(['m.yaml', '--only', 'a', '--only=b*', '--dry']);
    expect(parsed).toMatchObject({ values: { only: ['a', 'b*'], dry: true } });
  });

  it('checks choices and suggests the closest one', () => {
    expect(parse(['m.yaml', '--progress', 'ndjson'])).toMatchObject({ values: { progress: 'ndjson' } });
    expect(failure(() => parse(['m.yaml', '--progress', 'ndjsn']))).toBe(
      "--progress accepts ndjson, not 'ndjsn', did you mean 'ndjson'? (see mediabatch demo --help)",
    );
  });

  it('names the flag that lacks a value, or that got one it takes none of', () => {
    expect(failure(() => parse(['m.yaml', '--only']))).toMatch(/^--only needs a value: --only ID/);
    expect(failure(() => parse(['m.yaml', '--dry=yes']))).toMatch(/^--dry is a switch and takes no value/);
  });

  it('answers an unknown flag with the closest known one, or none when nothing is close', () => {
    expect(failure(() => parse(['m.yaml', '--onyl', 'a']))).toMatch(
      /^unknown option '--onyl', did you mean '--only'\?/,
    );
    expect(failure(() => parse(['m.yaml', '--frobnicate']))).toBe(
      "unknown option '--frobnicate' (see mediabatch demo --help)",
    );
  });

  it('counts positionals', () => {
    expect(failure(() => parse([]))).toMatch(/^missing <manifest> argument/);
    expect(failure(() => parse(['a.yaml', 'b.yaml']))).toMatch(
      /^expected one <manifest>, but also got: b\.yaml/,
    );
  });

  it('the real table gives run its flags with their defaults', () => {
    expect(parseCommandArgs('run', ['m.yaml', '--sandbox'])).toEqual({
      help: false,
      values: {
        'base-url': undefined,
        ledger: undefined,
        'poll-interval': undefined,
        sandbox: true,
        json: false,
        'regenerate-expired': false,
        redefine: false,
        redo: [],
        only: [],
        'retry-failed': false,
        help: false,
      },
      positionals: ['m.yaml'],
    });
    expect(parseCommandArgs('status', ['-h'])).toEqual({ help: true });
  });
});

describe('suggestions', () => {
  it('counts an adjacent swap as one edit', () => {
    expect(editDistance('promt', 'prompt')).toBe(1);
    expect(editDistance('secnods', 'seconds')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('suggests within a budget that grows with the length of the word', () => {
    expect(closestMatch('secnds', ['seconds', 'definition'])).toBe('seconds');
    expect(closestMatch('styl', ['style', 'seed'])).toBe('style');
    expect(closestMatch('colour', ['seconds', 'definition'])).toBeNull();
  });
});
