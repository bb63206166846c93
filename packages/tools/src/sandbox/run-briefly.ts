import { spawn } from "node:child_process";

/** How a short helper command ended. */
export interface BriefRun {
  /** Exit code; null when a signal ended it or it could not start. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Why it could not start or was killed (ENOENT, the timeout), if so. */
  readonly failure?: string;
}

/**
 * Runs a short helper command (a probe: `bwrap --version`, a sandboxed `true`) without blocking
 * the event loop, killing it after `timeoutMs`. Never throws: every outcome is a `BriefRun`.
 */
export function runBriefly(
  file: string,
  args: readonly string[],
  options: {
    cwd?: string;
    env?: Readonly<Record<string, string>>;
    timeoutMs?: number;
    signal?: AbortSignal;
  } = {},
): Promise<BriefRun> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let failure: string | undefined;
    const child = spawn(file, [...args], {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const timer = setTimeout(() => {
      failure = `no answer within ${options.timeoutMs ?? 10_000} ms`;
      child.kill("SIGKILL");
    }, options.timeoutMs ?? 10_000);
    child.stdout.on("data", (chunk: Buffer) => {
      stdout = (stdout + chunk.toString()).slice(-4096);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4096);
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      failure ??= error.code ?? error.message;
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ...(failure === undefined ? {} : { failure }) });
    });
  });
}
