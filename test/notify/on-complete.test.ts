import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/notify/on-complete.js';
import { SIGNATURE_HEADER, signatureHeader } from '../../src/notify/sign.js';

describe('parseCommand: --on-complete words without a shell', () => {
  it.each([
    ['notify-send done', ['notify-send', 'done']],
    [`notify-send 'batch "night" done'`, ['notify-send', 'batch "night" done']],
    ['say "two words" three\\ four', ['say', 'two words', 'three four']],
    // Not expanded: a variable reaches the program as its name ($USER for ${USER}).
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the braces are the shell's, not a template's
    ['echo $HOME ${USER} *.mp4', ['echo', '$HOME', '$USER', '*.mp4']],
    [`sh -c 'echo $MEDIABATCH_DONE | mail me'`, ['sh', '-c', 'echo $MEDIABATCH_DONE | mail me']],
    ['run-it # a comment', ['run-it']],
  ])('%s', (text, argv) => {
    expect(parseCommand(text)).toEqual({ argv });
  });

  it.each([
    ['a | b', '|'],
    ['a && b', '&&'],
    ['a; b', ';'],
    ['a > out', '>'],
  ])('refuses shell syntax in %s', (text, op) => {
    expect(parseCommand(text)).toEqual({
      problem: `"${op}" is shell syntax, and no shell runs the command; to use a shell, write sh -c '...'`,
    });
  });

  it('refuses a command with no program', () => {
    expect(parseCommand('   ')).toEqual({ problem: 'names no program to run' });
  });
});

describe('signatureHeader', () => {
  it('is t=<seconds>,v1=HMAC-SHA256(secret, "<t>.<body>") in hex', () => {
    const body = '{"event":"run.finished"}';
    const digest = createHmac('sha256', 'k').update(`1700000000.${body}`).digest('hex');
    expect(signatureHeader('k', body, 1_700_000_000.9)).toBe(`t=1700000000,v1=${digest}`);
    expect(digest).toHaveLength(64);
  });

  it('travels in the header receivers check, the one docs/overnight.md names', () => {
    // Receivers look the header up by this name; renaming it breaks every receiver silently.
    expect(SIGNATURE_HEADER).toBe('x-mediabatch-signature');
    const guide = readFileSync(new URL('../../docs/overnight.md', import.meta.url), 'utf8');
    expect(guide).toContain(`request.headers['${SIGNATURE_HEADER}']`);
  });
});
