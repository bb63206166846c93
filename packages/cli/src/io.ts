import { homedir } from "node:os";
import type { PodkitEnv } from "@podkit/manifest";

/** Something text can be written to (process.stdout, or a buffer in tests). */
export interface TextSink {
  write(text: string): unknown;
}

/** Everything the CLI touches of its process, injectable for tests. */
export interface CliIo {
  stdout: TextSink;
  stderr: TextSink;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Home directory; defaults to `$HOME`, else the OS user's home. */
  home?: string;
}

/** The `PodkitEnv` (cwd, home, environment) the CLI's commands resolve paths with. */
export function podkitEnvOf(io: CliIo): PodkitEnv {
  return { cwd: io.cwd, home: io.home ?? io.env.HOME ?? homedir(), env: io.env };
}
