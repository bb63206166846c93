import { spawn } from "node:child_process";
import { realpath } from "node:fs/promises";
import type { ToolSandbox } from "../sandbox/sandbox.js";

/** How long one git command may take before it is killed. */
const GIT_TIMEOUT_MS = 30_000;
/** The most a git command's output may hold (a status listing of a huge tree of untracked files). */
const MAX_GIT_OUTPUT = 64 * 1024 * 1024;

/**
 * Git in the workspace, for file tracking's fallback when the tree is too big to scan
 * (docs/rewind.md, "What is tracked"). Every command runs inside the pod's sandbox: a
 * repository's configuration and attributes can name programs git runs (`core.fsmonitor`, clean
 * and smudge filters), and the repository is something the model can write. The fsmonitor hook
 * is switched off and nothing takes git's optional locks, so a status never writes the index.
 */
export class WorkspaceGit {
  private constructor(
    private readonly sandbox: ToolSandbox,
    private readonly workspace: string,
    private readonly env: Readonly<Record<string, string>>,
    /** The work tree's top directory, canonical: status paths are relative to it. */
    readonly top: string,
  ) {}

  /** The git of `workspace` when it is in a work tree and git runs in the sandbox; else why not. */
  static async open(
    sandbox: ToolSandbox,
    workspace: string,
    env: Readonly<Record<string, string | undefined>>,
  ): Promise<WorkspaceGit | string> {
    const probe = await sandbox.probe();
    if (!probe.active)
      return "there is no active sandbox to run git in (a repository's configuration can run programs)";
    const gitEnv: Record<string, string> = { PATH: env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" };
    const git = new WorkspaceGit(sandbox, workspace, gitEnv, "");
    const shown = await git.run(["rev-parse", "--show-toplevel"]);
    if (shown.code !== 0) return "the workspace is not in a git work tree";
    const top = await realpath(shown.stdout.toString("utf8").trim()).catch(() => undefined);
    if (top === undefined) return "git named a work tree that cannot be found";
    return new WorkspaceGit(sandbox, workspace, gitEnv, top);
  }

  /**
   * The paths (relative to `top`) `git status` lists under the workspace: modified, added,
   * deleted and untracked (every file of an untracked directory), ignored ones left out.
   * Undefined when git failed.
   */
  async dirty(): Promise<string[] | undefined> {
    const result = await this.run([
      "status",
      "--porcelain=v1",
      "-z",
      "--untracked-files=all",
      "--ignored=no",
      "--no-renames",
      "--",
      ".",
    ]);
    if (result.code !== 0) return undefined;
    // `XY <path>\0` per entry; without renames no entry carries a second path.
    return result.stdout
      .toString("utf8")
      .split("\0")
      .filter((line) => line.length > 3)
      .map((line) => line.slice(3));
  }

  /** The bytes git's index holds for `path` (relative to `top`), undefined when it holds none. */
  async indexed(path: string): Promise<Buffer | undefined> {
    const result = await this.run(["cat-file", "blob", `:${path}`]);
    return result.code === 0 ? result.stdout : undefined;
  }

  private async run(args: readonly string[]): Promise<{ code: number | null; stdout: Buffer }> {
    const command = await this.sandbox.wrap({
      file: "git",
      args: ["-c", "core.fsmonitor=false", "-c", "core.quotepath=false", "--no-optional-locks", ...args],
      cwd: this.workspace,
      env: this.env,
    });
    try {
      return await collect(command.file, command.args, command.cwd, command.env);
    } finally {
      await command.release();
    }
  }
}

function collect(
  file: string,
  args: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>>,
): Promise<{ code: number | null; stdout: Buffer }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const child = spawn(file, [...args], { cwd, env: { ...env }, stdio: ["ignore", "pipe", "ignore"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), GIT_TIMEOUT_MS);
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_GIT_OUTPUT) child.kill("SIGKILL");
      else chunks.push(chunk);
    });
    child.on("error", () => undefined);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: size > MAX_GIT_OUTPUT ? null : code, stdout: Buffer.concat(chunks) });
    });
  });
}
