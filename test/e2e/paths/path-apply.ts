import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Of } from './disk-state.js';
import { command, commands } from './path-checks.js';
import { checkAfterStep, fullRun, killedRun, redoRun } from './path-run.js';
import { type Step, stepText, type Target } from './path-steps.js';
import { IDS, NAME, type PathsWorld, PROMPTS, RETENTION_SECONDS } from './paths-world.js';

/** An hour past the sandbox's retention (a day): every output made before is deleted. */
const PAST_RETENTION_MS = (RETENTION_SECONDS + 3600) * 1000;

const pick = <T>(values: readonly T[], index: number): T | undefined =>
  values[index % Math.max(1, values.length)];

/** Whether a step changes anything in this state: an undo needs an edit, an alteration a video. */
export function applies(world: Readonly<PathsWorld>, step: Step): boolean {
  switch (step.kind) {
    case 'undo':
      return world.edits.length > 0;
    case 'restore':
      return world.removed.length > 0;
    case 'remove':
    case 'swap':
      return world.items.length > 1;
    case 'twin':
      return world.items.length < IDS.length;
    case 'alter':
    case 'delete':
      return world.videos().length > 0;
    default:
      return true;
  }
}

/** Applies one step to the world, then checks what must hold after any step. */
export async function applyStep(world: PathsWorld, step: Step): Promise<void> {
  world.log(`> ${stepText(step)}`);
  await act(world, step);
  await checkAfterStep(world);
}

async function act(world: PathsWorld, step: Step): Promise<void> {
  const used = (id: string) => world.items.some((item) => item.id === id);
  switch (step.kind) {
    case 'run':
      return fullRun(world);
    case 'regenerate':
      return fullRun(world, ['--regenerate-expired']);
    case 'kill':
      return killedRun(world, step.after, step.count);
    case 'redo':
      return redoRun(world, step.at);
    case 'edit': {
      const item = pick(world.items, step.at)!;
      const prompt =
        step.prompt % PROMPTS.length === item.prompt
          ? (item.prompt + 1) % PROMPTS.length
          : step.prompt % PROMPTS.length;
      world.edits.push({ id: item.id, before: item.prompt });
      item.prompt = prompt;
      return edited(world);
    }
    case 'undo': {
      const last = world.edits.pop();
      const item = last && world.items.find((entry) => entry.id === last.id);
      if (last && item) item.prompt = last.before;
      return edited(world);
    }
    case 'swap': {
      const [x, y] = [pick(world.items, step.at)!, pick(world.items, step.with)!];
      [x.id, y.id] = [y.id, x.id];
      return edited(world);
    }
    case 'rename': {
      const id = pick(IDS, step.to)!;
      if (!used(id)) pick(world.items, step.at)!.id = id;
      return edited(world);
    }
    case 'twin': {
      const of = pick(world.items, step.of)!;
      const id = [...IDS.slice(step.id % IDS.length), ...IDS].find((candidate) => !used(candidate));
      if (id) world.items.push({ id, prompt: of.prompt });
      return edited(world);
    }
    case 'remove':
      if (world.items.length > 1) world.removed.push(...world.items.splice(step.at % world.items.length, 1));
      return edited(world);
    case 'restore': {
      const item = world.removed.pop();
      if (item && !used(item.id)) world.items.push(item);
      return edited(world);
    }
    case 'variants':
      world.variants = step.count;
      return edited(world);
    case 'alter':
    case 'delete':
      return changeVideo(world, step.kind, step.file);
    case 'keep': {
      const item = pick(world.items, step.at)!;
      await command(world, ['keep', world.manifest, `${item.id}:${Math.min(step.variant, world.variants)}`]);
      return;
    }
    case 'import':
      rmSync(join(world.dir, '.mediabatch'), { recursive: true, force: true });
      world.log('  (the ledger is lost)');
      await command(world, ['import', world.manifest]);
      return;
    case 'time':
      world.offsetMs += PAST_RETENTION_MS;
      world.log(`  (${PAST_RETENTION_MS / 3600_000} hours pass)`);
      return;
    case 'write':
      return writeDocument(world, step.command, step.target);
  }
}

function edited(world: PathsWorld): void {
  world.writeManifest();
  const variants = world.variants > 1 ? `, variants ${world.variants}` : '';
  world.log(
    `  manifest: ${world.items.map((item) => `${item.id}=${PROMPTS[item.prompt]}`).join(', ')}${variants}`,
  );
}

/** One byte of a saved video changed (same size, same modification time), or the video deleted. */
function changeVideo(world: PathsWorld, how: 'alter' | 'delete', index: number): void {
  const name = pick(world.videos(), index);
  if (name === undefined) return;
  const path = join(world.outDir, name);
  if (how === 'delete') {
    rmSync(path);
  } else {
    const stat = statSync(path);
    const bytes = readFileSync(path);
    const at = Math.floor(bytes.length / 2);
    bytes.writeUInt8(bytes.readUInt8(at) ^ 0xff, at);
    writeFileSync(path, bytes);
    utimesSync(path, stat.atime, stat.mtime);
    world.testMade.add(sha256Of(path));
  }
  world.log(`  (${how === 'delete' ? 'deleted' : 'altered'} out/${NAME}/${name})`);
}

const EXTENSIONS = { plan: 'json', export: 'jsonl', report: 'html' } as const;

/** The path a --out/--html target stands for; protected ones fall back to a fresh path when absent. */
function targetPath(world: PathsWorld, kind: keyof typeof EXTENSIONS, target: Target): string {
  const fresh = `targets/${kind}.${EXTENSIONS[kind]}`;
  const outputs = (suffix: string) =>
    readdirSync(world.outDir, { withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(suffix) && !entry.name.startsWith('.'))
      .map((entry) => `out/${NAME}/${entry.name}`)
      .sort();
  switch (target) {
    case 'fresh':
      return fresh;
    case 'manifest':
      return 'batch.yaml';
    case 'ledger':
      return `.mediabatch/${NAME}.sqlite`;
    case 'video':
      return world.videos().length > 0 ? outputs('.mp4')[0]! : fresh;
    case 'sidecar':
      return world.videos().length > 0 ? (outputs('.json')[0] ?? fresh) : fresh;
  }
}

/**
 * `plan --out`, `export --out` or `report --html` to a target: a fresh path is written (exit 0);
 * a protected one (the manifest, the ledger, a saved video or sidecar) is refused at the door
 * (src/batch/named-files/named-target.ts: exit 2, nothing written), and no file changes either way.
 */
async function writeDocument(
  world: PathsWorld,
  kind: keyof typeof EXTENSIONS,
  target: Target,
): Promise<void> {
  const path = targetPath(world, kind, target);
  mkdirSync(join(world.dir, 'targets'), { recursive: true });
  const flag = kind === 'report' ? '--html' : '--out';
  const fresh = path.startsWith('targets/');
  const [run] = await commands(world, [[kind, world.manifest, flag, path]], {
    readOnly: true,
    target: fresh ? path : null,
  });
  const shown = `${kind} ${flag} ${path}`;
  if (fresh && run!.code === 0 && !readdirSync(join(world.dir, 'targets')).includes(path.slice(8)))
    world.violated('2 document not written', `${shown} exited 0 and wrote nothing`);
  if (!fresh && (run!.code !== 2 || !/nothing was written/i.test(run!.stderr)))
    world.violated(
      '2 protected target not refused',
      `${shown} exited ${run!.code} (the door refuses it with exit 2): ${run!.stderr.trim()}`,
    );
}
