import { describe, expect, it } from 'vitest';
import { manifestOf, parseText } from '../support/manifest-text.js';

/** `fallback_prompts` (docs/manifest.md, "Fallback prompts"): read, rendered and checked as prompts are. */

const problemsOf = (text: string) => {
  const result = parseText(text);
  return result.ok ? [] : result.problems.map((p) => [p.line, p.path, p.message]);
};

describe('fallback_prompts', () => {
  it('reads an item list, and the manifest list for items that give none; absent means none', () => {
    const m = manifestOf(`
version: 1
name: t
fallback_prompts: ["a calm sea"]
items:
  - {id: a, prompt: "a storm", fallback_prompts: ["a grey sky", "clouds"]}
  - {id: b, prompt: "a wave"}
`);
    expect(m.items.map((item) => [item.id, item.fallbackPrompts])).toEqual([
      ['a', ['a grey sky', 'clouds']],
      ['b', ['a calm sea']],
    ]);
    const plain = manifestOf('version: 1\nname: t\nitems:\n  - {id: a, prompt: "x"}\n');
    expect(Object.hasOwn(plain.items[0]!, 'fallbackPrompts')).toBe(false);
  });

  it('renders fallbacks from the variables the prompt sees, {variant} included', () => {
    const m = manifestOf(`
version: 1
name: t
vars: {animal: [fox, owl]}
prompt: "A {animal} fighting"
fallback_prompts: ["A {animal} resting", "A {animal}, take {variant}"]
variants: 2
items:
  - {id: w}
`);
    expect(m.items.map((item) => [item.id, item.input.prompt, item.fallbackPrompts])).toEqual([
      ['w.fox', 'A fox fighting', ['A fox resting', 'A fox, take 1']],
      ['w.fox.v2', 'A fox fighting', ['A fox resting', 'A fox, take 2']],
      ['w.owl', 'A owl fighting', ['A owl resting', 'A owl, take 1']],
      ['w.owl.v2', 'A owl fighting', ['A owl resting', 'A owl, take 2']],
    ]);
  });

  it('sends a fallback as written where the prompt is (no variables), braces included', () => {
    const m = manifestOf(
      'version: 1\nname: t\nitems:\n  - {id: a, prompt: "x", fallback_prompts: ["{not} a placeholder"]}\n',
    );
    expect(m.items[0]!.fallbackPrompts).toEqual(['{not} a placeholder']);
  });

  it('names the fallback a placeholder or a brace is wrong in, at its line', () => {
    expect(
      problemsOf(`version: 1
name: t
vars: {animal: fox}
items:
  - id: a
    prompt: "A {animal}"
    fallback_prompts:
      - "A {animl}"
      - "A {animal"
`),
    ).toEqual([
      [8, 'items[0].fallback_prompts[0]', "placeholder {animl} has no variable, did you mean 'animal'?"],
      [
        9,
        'items[0].fallback_prompts[1]',
        "unclosed brace: a '{' has no '}' (write '{{' for a literal brace) (at character 3 of the fallback prompt)",
      ],
    ]);
  });

  it('refuses an empty list, an empty prompt, more than ten, and a text instead of a list', () => {
    const eleven = JSON.stringify(Array.from({ length: 11 }, (_, i) => `p${i}`));
    expect(
      problemsOf(`version: 1
name: t
items:
  - {id: a, prompt: x, fallback_prompts: []}
  - {id: b, prompt: x, fallback_prompts: ["  "]}
  - {id: c, prompt: x, fallback_prompts: ${eleven}}
  - {id: d, prompt: x, fallback_prompts: "one"}
`),
    ).toEqual([
      [4, 'items[0].fallback_prompts', 'must list at least one prompt (leave the key out for none)'],
      [5, 'items[1].fallback_prompts[0]', 'prompt must not be empty'],
      [6, 'items[2].fallback_prompts', 'must list at most 10 prompts'],
      [7, 'items[3].fallback_prompts', 'must be a list of prompts, not the string "one"'],
    ]);
  });

  it('counts a variable used only by a fallback as used', () => {
    const m = manifestOf(`
version: 1
name: t
vars: {mood: calm}
prompt: "A sea"
fallback_prompts: ["A {mood} sea"]
items:
  - {id: a}
`);
    expect(m.warnings).toEqual([]);
  });
});
