import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomically, writeFolderAtomically } from '../../src/downloads/write-atomically.js';
import { openDescriptors, traceDisk } from '../support/disk-trace.js';
import { tempDir } from '../support/temp.js';

/** The steps of one atomic write, with the temporary name it used replaced by `TEMP`. */
function steps(log: string[], dir: string): string[] {
  const temp = new RegExp(`${dir}/\\.[0-9a-f]{12}\\.mbtmp`, 'g');
  return log.map((line) => line.replace(temp, 'TEMP'));
}

const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

/** How many write(2) calls `body` makes, through node's own `write`, wrapped and still called. */
async function countWrites(body: () => Promise<unknown>): Promise<number> {
  const write = fs.write;
  let count = 0;
  fs.write = ((...args: unknown[]) => {
    count += 1;
    return (write as (...all: unknown[]) => void)(...args);
  }) as typeof fs.write;
  syncBuiltinESMExports();
  try {
    await body();
  } finally {
    fs.write = write;
    syncBuiltinESMExports();
  }
  return count;
}

describe('writeFileAtomically', () => {
  it('writes a hidden temporary file, fsyncs it, renames it into place, then fsyncs the folder', async () => {
    const dir = realpathSync(tempDir());
    const path = join(dir, 'clip.json');
    const before = openDescriptors();
    const log = await traceDisk(() => writeFileAtomically(path, '{"take":1}\n'));
    expect(openDescriptors()).toBe(before);
    expect(steps(log, dir)).toEqual(['fsync TEMP', `rename TEMP -> ${path}`, `fsync ${dir}`]);
    expect(readFileSync(path, 'utf8')).toBe('{"take":1}\n');
    expect(readdirSync(dir)).toEqual(['clip.json']);
  });

  it('writes bytes as they are, and replaces an older file whole', async () => {
    const dir = realpathSync(tempDir());
    const path = join(dir, 'a.bin');
    writeFileSync(path, 'an older, longer content');
    const bytes = Uint8Array.from([0, 255, 10, 13, 7]);
    await writeFileAtomically(path, bytes);
    expect(new Uint8Array(readFileSync(path))).toEqual(bytes);
  });

  it('leaves the folder fsync to the caller when told to', async () => {
    const dir = realpathSync(tempDir());
    const path = join(dir, 'clip.json');
    const log = await traceDisk(() => writeFileAtomically(path, 'x', { syncFolder: false }));
    expect(steps(log, dir)).toEqual(['fsync TEMP', `rename TEMP -> ${path}`]);
  });

  it('makes a missing folder, and only then', async () => {
    const dir = realpathSync(tempDir());
    const path = join(dir, 'deep', 'er', 'clip.json');
    await writeFileAtomically(path, 'x');
    expect(readFileSync(path, 'utf8')).toBe('x');
    expect(readdirSync(join(dir, 'deep', 'er'))).toEqual(['clip.json']);
  });

  it('with makeFolder: false, makes no folder: a missing one fails with ENOENT and leaves nothing', async () => {
    const dir = realpathSync(tempDir());
    const path = join(dir, 'deep', 'clip.json');
    await expect(writeFileAtomically(path, 'x', { makeFolder: false })).rejects.toMatchObject({
      message: expect.stringMatching(/^cannot write clip\.json: .*ENOENT/),
      code: 'ENOENT',
    });
    expect(existsSync(join(dir, 'deep'))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
    await writeFileAtomically(join(dir, 'clip.json'), 'y', { makeFolder: false });
    expect(readFileSync(join(dir, 'clip.json'), 'utf8')).toBe('y');
  });

  it('writes text given as chunks, in order, multi-byte characters included', async () => {
    const dir = realpathSync(tempDir());
    const path = join(dir, 'export.jsonl');
    await writeFileAtomically(path, ['{"id":"a"}\n', '', '{"prompt":"café 🎬"}\n']);
    expect(readFileSync(path, 'utf8')).toBe('{"id":"a"}\n{"prompt":"café 🎬"}\n');
    expect(readdirSync(dir)).toEqual(['export.jsonl']);
  });

  it('writes each chunk before the next is made, so a long document is never whole in memory', async () => {
    const dir = realpathSync(tempDir());
    const path = join(dir, 'export.jsonl');
    const seen: string[] = [];
    function* lines(): Generator<string> {
      for (const line of ['one\n', 'two\n', 'three\n']) {
        const temps = readdirSync(dir).filter((name) => name.endsWith('.mbtmp'));
        seen.push(temps.map((name) => readFileSync(join(dir, name), 'utf8')).join('|'));
        yield line;
      }
    }
    await writeFileAtomically(path, lines());
    expect(seen).toEqual(['', 'one\n', 'one\ntwo\n']);
    expect(readFileSync(path, 'utf8')).toBe('one\ntwo\nthree\n');
  });

  it('hands text or bytes to the system in one write, and chunks one write each', async () => {
    const dir = realpathSync(tempDir());
    const text = `${'a long sidecar line\n'.repeat(2000)}é`;
    expect(await countWrites(() => writeFileAtomically(join(dir, 'a.json'), text))).toBe(1);
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe(text);
    expect(await countWrites(() => writeFileAtomically(join(dir, 'b.bin'), Buffer.from(text)))).toBe(1);
    expect(await countWrites(() => writeFileAtomically(join(dir, 'c.txt'), ['a', 'b', 'c']))).toBe(3);
    expect(readFileSync(join(dir, 'c.txt'), 'utf8')).toBe('abc');
  });

  it('fails naming the file and keeping the system code, and leaves no temporary file', async () => {
    const dir = realpathSync(tempDir());
    mkdirSync(join(dir, 'clip.json'));
    writeFileSync(join(dir, 'clip.json', 'inside'), 'x');
    const before = openDescriptors();
    const log = await traceDisk(async () => {
      await expect(writeFileAtomically(join(dir, 'clip.json'), 'x')).rejects.toMatchObject({
        message: expect.stringMatching(/^cannot write clip\.json: .*(EISDIR|ENOTEMPTY|EEXIST)/),
        code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/),
      });
    });
    // No rename happened, so no folder fsync either: nothing new is there to make durable.
    expect(steps(log, dir)).toEqual(['fsync TEMP']);
    expect(openDescriptors()).toBe(before);
    expect(readdirSync(dir)).toEqual(['clip.json']);
  });

  it('passes on a folder it cannot make', async () => {
    const dir = realpathSync(tempDir());
    writeFileSync(join(dir, 'file'), 'x');
    await expect(writeFileAtomically(join(dir, 'file', 'clip.json'), 'x')).rejects.toMatchObject({
      message: expect.stringMatching(/^cannot write clip\.json: .*ENOTDIR/),
      code: 'ENOTDIR',
    });
    await expect(writeFileAtomically(join(dir, 'file', 'sub', 'clip.json'), 'x')).rejects.toMatchObject({
      code: 'ENOTDIR',
    });
    expect(readdirSync(dir)).toEqual(['file']);
  });
});

describe('writeFolderAtomically', () => {
  const fill = (files: Record<string, string>) => async (temp: string) => {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(temp, name), text);
  };

  it('fills a hidden folder beside the target, renames it into place, then fsyncs the parent', async () => {
    const dir = realpathSync(tempDir());
    const target = join(dir, 'bundle');
    const seen: string[] = [];
    const log = await traceDisk(() =>
      writeFolderAtomically(
        target,
        async (temp) => {
          seen.push(temp);
          await fill({ 'a.json': 'a', 'b.json': 'b' })(temp);
        },
        false,
      ),
    );
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(new RegExp(`^${dir}/\\.bundle\\.new\\.[0-9a-f]{12}\\.mbtmp$`));
    expect(log).toEqual([`rename ${seen[0]} -> ${target}`, `fsync ${dir}`]);
    expect(readdirSync(dir)).toEqual(['bundle']);
    expect(readdirSync(target).sort()).toEqual(['a.json', 'b.json']);
    expect(readFileSync(join(target, 'b.json'), 'utf8')).toBe('b');
  });

  it('with replace, sets the earlier folder aside, puts the new one in place and removes the earlier', async () => {
    const dir = realpathSync(tempDir());
    const target = join(dir, 'bundle');
    mkdirSync(target);
    writeFileSync(join(target, 'old.json'), 'old');
    const log = await traceDisk(() => writeFolderAtomically(target, fill({ 'new.json': 'new' }), true));
    const renames = log.filter((line) => line.startsWith('rename'));
    expect(renames).toHaveLength(2);
    expect(renames[0]).toMatch(
      new RegExp(`^rename ${target} -> ${dir}/\\.bundle\\.old\\.[0-9a-f]{12}\\.mbtmp$`),
    );
    expect(renames[1]).toMatch(
      new RegExp(`^rename ${dir}/\\.bundle\\.new\\.[0-9a-f]{12}\\.mbtmp -> ${target}$`),
    );
    expect(log.at(-1)).toBe(`fsync ${dir}`);
    expect(readdirSync(dir)).toEqual(['bundle']);
    expect(readdirSync(target)).toEqual(['new.json']);
  });

  it('without replace, an empty folder there is replaced and a full one is kept, the new one dropped', async () => {
    const dir = realpathSync(tempDir());
    const target = join(dir, 'bundle');
    mkdirSync(target);
    await writeFolderAtomically(target, fill({ 'a.json': 'a' }), false);
    expect(readdirSync(target)).toEqual(['a.json']);
    await expect(writeFolderAtomically(target, fill({ 'b.json': 'b' }), false)).rejects.toMatchObject({
      code: expect.stringMatching(/^(ENOTEMPTY|EEXIST)$/),
    });
    expect(readdirSync(dir)).toEqual(['bundle']);
    expect(readdirSync(target)).toEqual(['a.json']);
  });

  it('when filling fails, passes the error on and leaves neither the target nor a temporary folder', async () => {
    const dir = realpathSync(tempDir());
    const target = join(dir, 'bundle');
    const failure = new Error('disk full');
    await expect(
      writeFolderAtomically(
        target,
        async (temp) => {
          writeFileSync(join(temp, 'half.json'), 'x');
          throw failure;
        },
        true,
      ),
    ).rejects.toBe(failure);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('makes the parent folders it needs', async () => {
    const dir = realpathSync(tempDir());
    const target = join(dir, 'deep', 'er', 'bundle');
    await writeFolderAtomically(target, fill({ 'a.json': 'a' }), false);
    expect(readdirSync(join(dir, 'deep', 'er'))).toEqual(['bundle']);
    expect(readFileSync(join(target, 'a.json'), 'utf8')).toBe('a');
  });
});
