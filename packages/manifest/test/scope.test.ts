import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Scope, ScopeError } from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

let t: TempRoot;
beforeEach(async () => {
  t = await makeTempRoot();
});
afterEach(async () => {
  await t.cleanup();
});

describe("Scope matching", () => {
  it("compares by path component, so /a/bc is not inside /a/b", async () => {
    const b = await t.mkdir("a/b");
    const bc = await t.mkdir("a/bc");
    const scope = await Scope.fromRules([{ target: b, permission: "write" }]);
    expect(await scope.permissionAt(join(b, "x.txt"))).toBe("write");
    expect(await scope.permissionAt(b)).toBe("write");
    expect(await scope.permissionAt(bc)).toBeNull();
    expect(await scope.permissionAt(join(bc, "x.txt"))).toBeNull();
    expect(await scope.permissionAt(t.path("a"))).toBeNull();
  });

  it("a non-recursive rule covers its target and direct children only", async () => {
    const dir = await t.mkdir("flat/sub/deeper");
    const scope = await Scope.fromRules([{ target: t.path("flat"), permission: "read", recursive: false }]);
    expect(await scope.permissionAt(t.path("flat"))).toBe("read");
    expect(await scope.permissionAt(t.path("flat/file.txt"))).toBe("read");
    expect(await scope.permissionAt(t.path("flat/sub"))).toBe("read");
    expect(await scope.permissionAt(t.path("flat/sub/file.txt"))).toBeNull();
    expect(await scope.permissionAt(dir)).toBeNull();
  });

  it("grants the highest permission among matching allow rules", async () => {
    await t.mkdir("repo/out");
    const scope = await Scope.fromRules([
      { target: t.path("repo"), permission: "read" },
      { target: t.path("repo/out"), permission: "write" },
    ]);
    expect(await scope.permissionAt(t.path("repo/src.ts"))).toBe("read");
    expect(await scope.permissionAt(t.path("repo/out/report.md"))).toBe("write");
  });

  it("deny read removes all access while deny write caps at read", async () => {
    await t.mkdir("repo/secrets");
    await t.mkdir("repo/vendor");
    const scope = await Scope.fromRules(
      [{ target: t.path("repo"), permission: "write" }],
      [
        { target: t.path("repo/secrets"), permission: "read" },
        { target: t.path("repo/vendor"), permission: "write" },
      ],
    );
    expect(await scope.permissionAt(t.path("repo/secrets/key.pem"))).toBeNull();
    expect(await scope.permissionAt(t.path("repo/vendor/lib.js"))).toBe("read");
    expect(await scope.permissionAt(t.path("repo/main.ts"))).toBe("write");

    const secret = await scope.check(t.path("repo/secrets/key.pem"), "read");
    expect(secret).toMatchObject({ ok: false, reason: "denied-by-rule", granted: null, want: "read" });
    expect(secret.ok === false && secret.rule?.target).toBe(t.path("repo/secrets"));
    const vendorWrite = await scope.check(t.path("repo/vendor/lib.js"), "write");
    expect(vendorWrite).toMatchObject({ ok: false, reason: "denied-by-rule", granted: "read" });
    expect(vendorWrite.ok === false && vendorWrite.message).toContain("deny rule");
    expect(await scope.check(t.path("repo/vendor/lib.js"), "read")).toEqual({
      ok: true,
      path: t.path("repo/vendor/lib.js"),
      granted: "read",
    });
  });

  it("a deny rule on a parent caps a more specific allow rule below it", async () => {
    await t.mkdir("repo/generated/out");
    const scope = await Scope.fromRules(
      [{ target: t.path("repo/generated/out"), permission: "write" }],
      [{ target: t.path("repo/generated"), permission: "write" }],
    );
    expect(await scope.permissionAt(t.path("repo/generated/out/x"))).toBe("read");
  });

  it("reports outside-scope and read-only denials with their reasons", async () => {
    await t.mkdir("docs");
    const scope = await Scope.fromRules([{ target: t.path("docs"), permission: "read" }]);
    expect(await scope.check(t.path("elsewhere.txt"), "read")).toMatchObject({
      ok: false,
      reason: "not-allowed",
      granted: null,
    });
    const write = await scope.check(t.path("docs/a.md"), "write");
    expect(write).toMatchObject({ ok: false, reason: "read-only", granted: "read" });
    expect(write.ok === false && write.message).toContain("read only");
  });
});

describe("Scope and symlinks", () => {
  it("denies a symlink inside an allowed dir that points outside it", async () => {
    await t.write("outside/secret.txt", "s3cret");
    await t.mkdir("allowed");
    await symlink(t.path("outside"), t.path("allowed/escape"));
    await symlink(t.path("outside/secret.txt"), t.path("allowed/secret-link.txt"));
    const scope = await Scope.fromRules([{ target: t.path("allowed"), permission: "write" }]);

    const viaDir = await scope.check(t.path("allowed/escape/secret.txt"), "read");
    expect(viaDir).toMatchObject({ ok: false, reason: "not-allowed", path: t.path("outside/secret.txt") });
    expect(await scope.permissionAt(t.path("allowed/secret-link.txt"))).toBeNull();
    // A new file under the link would land outside, so creating it is refused too.
    expect(await scope.check(t.path("allowed/escape/new.txt"), "write")).toMatchObject({ ok: false });
  });

  it("follows a dangling symlink to where a write would land", async () => {
    await t.mkdir("allowed");
    await t.mkdir("outside");
    await symlink(t.path("outside/not-yet.txt"), t.path("allowed/dangling"));
    const scope = await Scope.fromRules([{ target: t.path("allowed"), permission: "write" }]);
    expect(await scope.check(t.path("allowed/dangling"), "write")).toMatchObject({
      ok: false,
      reason: "not-allowed",
      path: t.path("outside/not-yet.txt"),
    });
  });

  it("resolves .. physically after a symlink, not lexically", async () => {
    await t.mkdir("allowed");
    await t.write("outside/deep/x", "");
    await t.write("outside/loot.txt", "");
    await symlink(t.path("outside/deep"), t.path("allowed/link"));
    const scope = await Scope.fromRules([{ target: t.path("allowed"), permission: "read" }]);
    // Lexically allowed/link/../loot.txt is allowed/loot.txt; physically it is outside/loot.txt.
    expect(await scope.check(`${t.path("allowed/link")}/../loot.txt`, "read")).toMatchObject({
      ok: false,
      path: t.path("outside/loot.txt"),
    });
  });

  it("canonicalizes a symlinked allowed dir to its real target", async () => {
    await t.write("real/project/file.ts", "");
    await symlink(t.path("real/project"), t.path("alias"));
    const scope = await Scope.fromRules([{ target: t.path("alias"), permission: "write" }]);
    expect(scope.readable).toEqual([t.path("real/project")]);
    expect(await scope.check(t.path("real/project/file.ts"), "write")).toEqual({
      ok: true,
      path: t.path("real/project/file.ts"),
      granted: "write",
    });
    expect(await scope.permissionAt(t.path("alias/file.ts"))).toBe("write");
    expect(await scope.permissionAt(t.path("real/other.ts"))).toBeNull();
  });

  it("treats a symlink loop as unresolvable", async () => {
    await t.mkdir("allowed");
    await symlink(t.path("allowed/b"), t.path("allowed/a"));
    await symlink(t.path("allowed/a"), t.path("allowed/b"));
    const scope = await Scope.fromRules([{ target: t.path("allowed"), permission: "write" }]);
    expect(await scope.check(t.path("allowed/a/x"), "read")).toMatchObject({
      ok: false,
      reason: "unresolvable",
    });
  });
});

describe("Scope and paths that do not exist yet", () => {
  it("canonicalizes a missing tail through the nearest existing ancestor", async () => {
    await t.mkdir("work");
    await symlink(t.path("work"), t.path("w"));
    const scope = await Scope.fromRules([{ target: t.path("work"), permission: "write" }]);
    expect(await scope.check(t.path("w/new/dir/file.txt"), "write")).toEqual({
      ok: true,
      path: t.path("work/new/dir/file.txt"),
      granted: "write",
    });
    expect(await scope.check(`${t.path("work")}/new/./file.txt`, "write")).toMatchObject({
      ok: true,
      path: t.path("work/new/file.txt"),
    });
  });

  it("denies .. inside the missing tail even when it would land inside the scope", async () => {
    await t.mkdir("work");
    const scope = await Scope.fromRules([{ target: t.path("work"), permission: "write" }]);
    const result = await scope.check(`${t.path("work")}/missing/../file.txt`, "write");
    expect(result).toMatchObject({ ok: false, reason: "parent-traversal", granted: null });
    expect(result.ok === false && result.message).toContain('".."');
    // `..` over existing directories is ordinary path resolution.
    await t.mkdir("work/sub");
    expect(await scope.check(`${t.path("work")}/sub/../file.txt`, "write")).toMatchObject({
      ok: true,
      path: t.path("work/file.txt"),
    });
  });

  it("accepts a missing target and refuses one with .. in its missing tail", async () => {
    const scope = await Scope.fromRules([{ target: t.path("out/reports"), permission: "write" }]);
    expect(scope.writable).toEqual([t.path("out/reports")]);
    expect(await scope.permissionAt(t.path("out/reports/r1.md"))).toBe("write");
    const error = await Scope.fromRules([
      { target: `${t.path("out")}/x/../../etc`, permission: "read" },
    ]).catch((e: unknown) => e);
    expect(ScopeError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ problem: "parent-traversal" });
  });
});

describe("Scope with relative paths", () => {
  it("resolves relative targets and relative queries against the base directory", async () => {
    const base = await t.mkdir("manifests/team");
    await t.mkdir("manifests/shared");
    const scope = await Scope.fromRules(
      [
        { target: ".", permission: "write" },
        { target: "../shared", permission: "read" },
      ],
      [{ target: "private", permission: "read" }],
      base,
    );
    expect(scope.readable).toEqual([base, t.path("manifests/shared")]);
    expect(scope.deny[0]?.target).toBe(join(base, "private"));
    expect(await scope.permissionAt("notes.md")).toBe("write");
    expect(await scope.permissionAt("private/key")).toBeNull();
  });

  it("rejects a relative target when no base directory is given", async () => {
    const error = await Scope.fromRules([{ target: "src", permission: "read" }]).catch((e: unknown) => e);
    expect(ScopeError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ problem: "relative-without-base" });
  });

  it("denies relative query paths when no base directory is known", async () => {
    await t.mkdir("d");
    const scope = await Scope.fromRules([{ target: t.path("d"), permission: "read" }]);
    expect(await scope.check("d/x", "read")).toMatchObject({ ok: false, reason: "unresolvable" });
  });
});

describe("Scope summary, readable and writable", () => {
  it("formats recursive read and non-recursive write rules exactly", async () => {
    await mkdir(t.path("r"));
    await mkdir(t.path("w"));
    const scope = await Scope.fromRules([
      { target: t.path("r"), permission: "read" },
      { target: t.path("w"), permission: "write", recursive: false },
    ]);
    expect(scope.summary).toBe(
      `Readable:\n  - ${t.path("r")}\n  - ${t.path("w")} [non-recursive]\nWritable:\n  - ${t.path("w")} [non-recursive]`,
    );
  });

  it("omits empty sections, ignores deny rules and keeps declaration order", async () => {
    await writeFile(t.path("b.txt"), "");
    const scope = await Scope.fromRules(
      [
        { target: t.path("z"), permission: "read" },
        { target: t.path("a"), permission: "read" },
      ],
      [{ target: t.path("a"), permission: "read" }],
    );
    expect(scope.summary).toBe(`Readable:\n  - ${t.path("z")}\n  - ${t.path("a")}`);
    expect(scope.readable).toEqual([t.path("z"), t.path("a")]);
    expect(scope.writable).toEqual([]);
    expect(scope.summary.endsWith("\n")).toBe(false);
  });

  it("is the empty string when nothing is allowed", async () => {
    const scope = await Scope.fromRules([], [{ target: t.root, permission: "read" }]);
    expect(scope.summary).toBe("");
    expect(await scope.permissionAt(t.root)).toBeNull();
  });

  it("decides canonical paths without touching the file system", async () => {
    const scope = await Scope.fromRules([{ target: t.path("p"), permission: "write", recursive: false }]);
    expect(scope.permissionAtCanonical(t.path("p/q"))).toBe("write");
    expect(scope.permissionAtCanonical(t.path("p/q/r"))).toBeNull();
  });
});
