import { homedir } from "node:os";
import type { PodkitEnv } from "@podkit/manifest";

/** Something text can be written to (process.stdout, or a buffer in tests). */
export interface TextSink {
  write(text: string): unknown;
  /** True when it is a terminal (colours, live lines and prompts are used only then). */
  isTTY?: boolean;
  /** Terminal width, when it is one. */
  columns?: number;
}

/** Where interactive input comes from (process.stdin, or a stream in tests). */
export type InputSource = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };

/** Everything the CLI touches of its process, injectable for tests. */
export interface CliIo {
  stdout: TextSink;
  stderr: TextSink;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Home directory; defaults to `$HOME`, else the OS user's home. */
  home?: string;
  /** Input for prompts and approvals; absent → nothing can be asked (non-interactive). */
  stdin?: InputSource;
  /**
   * Subscribes to the process's SIGINT (Ctrl-C outside a raw-mode terminal, `kill -INT`);
   * returns the unsubscribe function. Absent in tests that do not need it.
   */
  onInterrupt?(handler: () => void): () => void;
  /** Subscribes to the process's SIGTERM (a supervisor stopping `podkit worker`); returns the unsubscribe function. */
  onTerminate?(handler: () => void): () => void;
}

/** The `PodkitEnv` (cwd, home, environment) the CLI's commands resolve paths with. */
export function podkitEnvOf(io: CliIo): PodkitEnv {
  return { cwd: io.cwd, home: io.home ?? io.env.HOME ?? homedir(), env: io.env };
}

/** True when `io` is an interactive terminal: input and output both TTYs. */
export function isInteractive(io: CliIo): boolean {
  return io.stdin?.isTTY === true && io.stdout.isTTY === true;
}
