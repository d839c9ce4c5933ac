import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderCommandsDoc, withReadmeReference } from '../../scripts/commands-doc.js';
import { FLAGS } from '../../src/cli/flags.js';

const root = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(root, path), 'utf8');

describe('the command reference is made from the flag table', () => {
  it("the README's command reference matches src/cli/flags.ts (run `npm run docs` after editing it)", () => {
    const readme = read('README.md');
    expect(readme).toBe(withReadmeReference(readme));
  });

  it('docs/commands.md matches src/cli/flags.ts (run `npm run docs` after editing it)', () => {
    expect(read('docs/commands.md')).toBe(renderCommandsDoc());
  });

  it('every flag of the table appears in both documents', () => {
    const readme = read('README.md');
    const commands = read('docs/commands.md');
    for (const flag of FLAGS) {
      expect(readme).toContain(`--${flag.name}`);
      expect(commands).toContain(`--${flag.name}`);
    }
  });
});
