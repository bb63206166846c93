import { spawn } from "node:child_process";
import type { SandboxCommand } from "../sandbox/sandbox.js";

/** What a finished (or killed) command produced. */
export interface CommandResult {
  /** Exit code, or null when a signal ended it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** stdout and stderr interleaved as they arrived, head and tail kept when over the cap. */
  output: string;
  /** Bytes the command wrote in total (before capping). */
  totalBytes: number;
  timedOut: boolean;
  aborted: boolean;
}

export interface RunCommandOptions {
  timeoutMs: number;
  /** Output bytes kept: half from the start, half from the end. */
  maxOutputBytes: number;
  signal?: AbortSignal;
}

/** `command` as the process `bash -c` runs it in `cwd` with `env`: what the sandbox wraps. */
export function shellCommand(
  command: string,
  options: { cwd: string; env: Record<string, string>; shell?: string },
): SandboxCommand {
  return { file: options.shell ?? "/bin/bash", args: ["-c", command], cwd: options.cwd, env: options.env };
}

/**
 * Runs `started` — a `shellCommand`, inside the pod's sandbox when the sandbox wrapped it — in its
 * own process group (`detached`), so the whole group, background children included, can be killed at once. On
 * timeout or abort the group gets SIGKILL; when the shell exits on its own, anything it left
 * running in the group is killed too, so no call leaves orphans behind. Without a sandbox, a
 * process that puts itself in a new session with `setsid` leaves the group and is out of reach
 * (documented); inside bubblewrap everything the command starts lives in the sandbox's own pid
 * namespace, which ends with the command (and dies with bubblewrap, `--die-with-parent`).
 */
export function runCommand(started: SandboxCommand, options: RunCommandOptions): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(started.file, [...started.args], {
      cwd: started.cwd,
      env: { ...started.env },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const capture = new HeadTail(options.maxOutputBytes);
    let timedOut = false;
    let aborted = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // ESRCH: the group is already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();

    child.stdout.on("data", (chunk: Buffer) => capture.add(chunk));
    child.stderr.on("data", (chunk: Buffer) => capture.add(chunk));
    child.on("error", (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      reject(error);
    });
    // The shell is done; whatever it started in the background still holds the pipes open.
    // Give their output a moment to drain, then end the group so nothing outlives the call.
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      setTimeout(killGroup, 50).unref();
    });
    child.on("close", (code, signal) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      killGroup();
      resolve({
        exitCode: exit?.code ?? code,
        signal: exit?.signal ?? signal,
        output: capture.text(),
        totalBytes: capture.total,
        timedOut,
        aborted,
      });
    });
  });
}

/** Keeps the first and last `max / 2` bytes of a stream, counting what was dropped between. */
export class HeadTail {
  private readonly half: number;
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  total = 0;

  constructor(max: number) {
    this.half = Math.max(1, Math.floor(max / 2));
  }

  add(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.half) {
      const take = rest.subarray(0, this.half - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      rest = rest.subarray(take.length);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tail.length > 1 && this.tailBytes - (this.tail[0]?.length ?? 0) >= this.half) {
      this.tailBytes -= (this.tail.shift() as Buffer).length;
    }
  }

  text(): string {
    const head = Buffer.concat(this.head).toString("utf8");
    let tail = Buffer.concat(this.tail);
    if (tail.length > this.half) tail = tail.subarray(tail.length - this.half);
    const dropped = this.total - this.headBytes - tail.length;
    if (dropped <= 0) return head + tail.toString("utf8");
    // Cut points may split a UTF-8 sequence; the replacement character marks that honestly.
    return `${head}\n[… ${dropped} bytes of output omitted …]\n${tail.toString("utf8")}`;
  }
}
