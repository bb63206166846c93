import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Scope } from "@podkit/manifest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scopeDenialHint } from "./scope-denial-hint.js";

// The hint reads the scope's own denial messages, so they come from a real `Scope.check`.

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "podkit-cli-scope-hint-")));
  await mkdir(join(root, "ro"));
  await mkdir(join(root, "rw", "secret"), { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function denialOf(path: string, want: "read" | "write"): Promise<string> {
  const scope = await Scope.fromRules(
    [
      { target: join(root, "ro"), permission: "read" },
      { target: join(root, "rw"), permission: "write" },
    ],
    [{ target: join(root, "rw", "secret"), permission: "read" }],
  );
  const check = await scope.check(path, want);
  if (check.ok) throw new Error(`${path} was allowed`);
  return `${check.message}. Readable locations are listed in the scope summary.`;
}

describe("the hint for a tool call the scope denied", () => {
  it("outside every rule: add a [[scope.allow]] rule with the permission the call wanted", async () => {
    const hint = scopeDenialHint(await denialOf(join(root, "elsewhere.txt"), "read"));
    expect(hint).toBe(
      `to allow it, add a [[scope.allow]] rule covering "${join(root, "elsewhere.txt")}" with permission = "read" to the manifest (docs/manifest.md, Scope)`,
    );
  });

  it("a write where the scope allows read only: a [[scope.allow]] rule with write permission", async () => {
    expect(scopeDenialHint(await denialOf(join(root, "ro", "a.txt"), "write"))).toMatch(
      /^to allow it, add a \[\[scope\.allow\]\] rule covering ".*ro\/a\.txt" with permission = "write"/,
    );
  });

  it("capped by a deny rule: names the [[scope.deny]] rule to narrow or remove", async () => {
    expect(scopeDenialHint(await denialOf(join(root, "rw", "secret", "k"), "read"))).toBe(
      `the [[scope.deny]] rule on "${join(root, "rw", "secret")}" (permission = "read") refuses it; narrow or remove that rule in the manifest to allow it`,
    );
  });

  it("any other tool error gets no scope hint", () => {
    expect(scopeDenialHint('"notes.txt" does not exist')).toBeUndefined();
  });
});
