import { execFileSync, spawnSync } from 'node:child_process';

/** Whether tmux can be run here (Debian's tmux package; CI installs it). */
export function tmuxAvailable(): boolean {
  return spawnSync('tmux', ['-V'], { stdio: 'ignore' }).status === 0;
}

export interface TmuxPane {
  /** The visible screen as text, one line per row, trailing blank rows dropped. */
  screen(): string;
  /** Resolves with the screen once `pattern` is on it. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Types keys into the pane, as tmux names them (`C-c` is Ctrl-C). */
  sendKeys(...keys: string[]): void;
  /** Whether the terminal shows its cursor (a program that hid it must show it again). */
  cursorShown(): boolean;
  close(): void;
}

let sessions = 0;

/**
 * Runs `argv` in a real terminal: a detached tmux session of the given size on a private server
 * (its own socket), so tests never touch a user's tmux. The pane stays after the command ends,
 * with `EXIT=<code>` under its output.
 */
export function startInTmux(
  argv: string[],
  options: { cwd: string; env: Record<string, string>; columns?: number; rows?: number; stderrTo?: string },
): TmuxPane {
  sessions += 1;
  const socket = `mediabatch-test-${process.pid}-${sessions}`;
  const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
  const env = Object.entries(options.env).map(([key, value]) => `${key}=${quote(value)}`);
  const redirect = options.stderrTo === undefined ? '' : ` 2>${quote(options.stderrTo)}`;
  // The shell outlives a Ctrl-C sent to the pane (a trap, unlike an ignored signal, is not inherited).
  const script = `trap true INT; cd ${quote(options.cwd)} && env ${env.join(' ')} ${argv.map(quote).join(' ')}${redirect}; echo EXIT=$?; sleep 600`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  tmux(
    'new-session',
    '-d',
    '-x',
    String(options.columns ?? 120),
    '-y',
    String(options.rows ?? 40),
    'sh',
    '-c',
    script,
  );
  const screen = () => tmux('capture-pane', '-p').replace(/\n+$/, '');
  return {
    screen,
    async waitFor(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = screen();
        if (pattern.test(text)) return text;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; the screen:\n${text}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    sendKeys(...keys) {
      tmux('send-keys', ...keys);
    },
    cursorShown: () => tmux('display-message', '-p', '#{cursor_flag}').trim() === '1',
    close() {
      spawnSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
    },
  };
}
