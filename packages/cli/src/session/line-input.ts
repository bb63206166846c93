import { createInterface, type Interface } from "node:readline";
import type { CliIo, InputSource } from "../io.js";

/**
 * Lines typed (or piped) into an interactive session, read one at a time on request. Lines that
 * arrive while nobody asks are kept in order (type-ahead, or a whole piped script). Ctrl-C goes to
 * `onInterrupt`, from the terminal's raw mode (readline) or the process's SIGINT.
 */
export class LineInput {
  private readonly rl: Interface;
  private readonly queued: string[] = [];
  private waiting: ((line: string | null) => void) | undefined;
  private closed = false;
  private readonly unsubscribe: (() => void) | undefined;

  constructor(io: CliIo & { stdin: InputSource }, onInterrupt: () => void) {
    const terminal = io.stdin.isTTY === true && io.stdout.isTTY === true;
    this.rl = createInterface({
      input: io.stdin,
      output: terminal ? (io.stdout as NodeJS.WritableStream) : undefined,
      terminal,
      historySize: terminal ? 100 : 0,
    });
    this.rl.on("line", (line) => {
      if (this.waiting === undefined) this.queued.push(line);
      else this.settle(line);
    });
    this.rl.on("close", () => {
      this.closed = true;
      this.settle(null);
    });
    this.rl.on("SIGINT", onInterrupt);
    this.unsubscribe = io.onInterrupt?.(onInterrupt);
  }

  /** Shows `prompt` and resolves to the next line, or null once input has ended (Ctrl-D, EOF). */
  nextLine(prompt: string): Promise<string | null> {
    const line = this.queued.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.rl.setPrompt(prompt);
      this.rl.prompt();
    });
  }

  /** Resolves a pending `nextLine` with null (an interrupted question) and clears the typed line. */
  cancelPending(): void {
    this.rl.write(null, { ctrl: true, name: "u" });
    this.settle(null);
  }

  /** Whether a `nextLine` is waiting for input. */
  get asking(): boolean {
    return this.waiting !== undefined;
  }

  /** Clears the half-typed line and shows the prompt again. */
  reprompt(): void {
    this.rl.write(null, { ctrl: true, name: "u" });
    this.rl.prompt();
  }

  close(): void {
    this.unsubscribe?.();
    this.rl.close();
  }

  private settle(line: string | null): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(line);
  }
}
