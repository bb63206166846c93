import type { BackendProbe, SandboxBackend } from "./backend.js";
import type { SandboxCommand } from "./sandbox.js";

/** `[sandbox] backend = "none"`: commands run as they are, with the user's full authority. */
export class NoneBackend implements SandboxBackend {
  readonly name = "none";
  readonly contains = false;

  async probe(): Promise<BackendProbe> {
    return { ok: true, version: null, degraded: [] };
  }

  async wrap(command: SandboxCommand): Promise<SandboxCommand> {
    return command;
  }

  async close(): Promise<void> {}
}

/** The OS backend on a platform podkit has no sandbox for (Windows, the BSDs): its probe says so. */
export class NoOsBackend implements SandboxBackend {
  readonly contains = true;

  constructor(readonly name: string) {}

  async probe(): Promise<BackendProbe> {
    return { ok: false, version: null, problem: `podkit has no OS sandbox for ${this.name}` };
  }

  async wrap(): Promise<SandboxCommand> {
    throw new Error(`internal: no OS sandbox for ${this.name}; the probe should have said so`);
  }

  async close(): Promise<void> {}
}
