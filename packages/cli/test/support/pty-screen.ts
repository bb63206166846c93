import xterm from "@xterm/headless";
import { type IPty, spawn as spawnPty } from "node-pty";

/**
 * A program running in a real pseudo-terminal, with a headless terminal emulator reading its
 * screen: what a person would see, after cursor moves, line clears and colours are applied.
 */
export class PtyScreen {
  private readonly terminal: InstanceType<typeof xterm.Terminal>;
  private readonly pty: IPty;
  private pending = Promise.resolve();
  readonly exited: Promise<number>;
  /** Everything the program wrote, control codes included. */
  raw = "";

  constructor(command: string, args: string[], options: { cwd: string; env: Record<string, string> }) {
    this.terminal = new xterm.Terminal({ cols: 120, rows: 50, scrollback: 1000, allowProposedApi: true });
    this.pty = spawnPty(command, args, {
      name: "xterm-256color",
      cols: 120,
      rows: 50,
      cwd: options.cwd,
      env: options.env,
    });
    this.pty.onData((data) => {
      this.raw += data;
      this.pending = this.pending.then(
        () => new Promise<void>((resolve) => this.terminal.write(data, resolve)),
      );
    });
    this.exited = new Promise((resolve) => this.pty.onExit(({ exitCode }) => resolve(exitCode)));
  }

  /** The screen and scrollback as text lines, trailing blanks trimmed. */
  async text(): Promise<string> {
    await this.pending;
    const buffer = this.terminal.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
    return lines.join("\n").trimEnd();
  }

  /**
   * Waits until the screen shows `pattern` (polling; fails with the screen after `timeoutMs`,
   * generous because on a busy machine starting the CLI alone can take over 15 s).
   */
  async waitFor(pattern: string | RegExp, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = await this.text();
      if (typeof pattern === "string" ? screen.includes(pattern) : pattern.test(screen)) return screen;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${String(pattern)}; the screen shows:\n${screen}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Types `text` as keystrokes. */
  type(text: string): void {
    this.pty.write(text);
  }

  kill(): void {
    try {
      this.pty.kill();
    } catch {
      // already gone
    }
  }
}
