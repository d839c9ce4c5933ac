import { appendFileSync, closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { UserError } from '../errors.js';
import type { SandboxStore, StateChange, StoreState } from './store.js';

/**
 * A sandbox's state file is a journal of JSON lines: a `state` line (the whole state when the file
 * was last compacted), then one line per change. Changes are appended before the request that made
 * them is answered, so a job a client was told about is on disk even if the process is killed the
 * next instant. Opening replays the lines, then rewrites the file compacted (temp file, fsync,
 * rename), so it never grows beyond one line per change of one sandbox lifetime.
 */
const VERSION = 1;

type Line = { kind: 'state'; v: number; state: StoreState } | StateChange;

export interface StateFile {
  close(): void;
}

/** Loads `path` into `store` when it exists, then keeps it up to date with every change. */
export function attachStateFile(store: SandboxStore, path: string): StateFile {
  const saved = readState(path);
  if (saved) store.restoreState(saved);
  writeCompacted(path, store.exportState());
  let pending: string[] = [];
  store.onChange = (change) => {
    pending.push(JSON.stringify(change));
  };
  store.onCommit = () => {
    if (pending.length === 0) return;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    appendFileSync(path, text, { mode: 0o600 });
  };
  return {
    close() {
      store.commit();
      store.onChange = null;
      store.onCommit = null;
      writeCompacted(path, store.exportState());
    },
  };
}

function readState(path: string): StoreState | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UserError(`${path}: cannot read the sandbox state (${(error as NodeJS.ErrnoException).code})`);
  }
  const lines = text.split('\n');
  // A line without its newline was cut by a crash mid-write; its request was never answered.
  if (!text.endsWith('\n')) lines.pop();
  let state: StoreState | null = null;
  lines.forEach((raw, index) => {
    if (raw === '') return;
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      throw new UserError(
        `${path}:${index + 1}: not a sandbox state line; move the file away to start afresh`,
      );
    }
    state = apply(state, line, `${path}:${index + 1}`);
  });
  return state;
}

function apply(state: StoreState | null, line: Line, where: string): StoreState {
  if (line.kind === 'state') {
    if (line.v !== VERSION)
      throw new UserError(`${where}: sandbox state version ${line.v} is not ${VERSION}`);
    return line.state;
  }
  if (!state) throw new UserError(`${where}: a change before the state line`);
  switch (line.kind) {
    case 'job':
      state.jobs.push(line.job);
      break;
    case 'count':
      state.counters.push([line.name, line.value]);
      break;
    case 'marker':
      state.markers.push([line.name, line.value]);
      break;
    case 'wallet':
      state.wallets.push([line.workspaceId, line.wallet]);
      break;
  }
  return state;
}

function writeCompacted(path: string, state: StoreState): void {
  const temp = `${path}.${process.pid}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify({ kind: 'state', v: VERSION, state })}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}
