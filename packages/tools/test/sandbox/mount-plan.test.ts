import { symlink } from "node:fs/promises";
import { Scope } from "@podkit/manifest";
import { describe, expect, it } from "vitest";
import { planMounts, systemMounts } from "../../src/sandbox/bwrap/mount-plan.js";
import { tempRoot } from "../helpers.js";

const BASE = [
  { op: "proc", path: "/proc" },
  { op: "dev", path: "/dev" },
  { op: "tmpfs", path: "/tmp" },
];

async function plan(
  allow: { target: string; permission: "read" | "write"; recursive?: boolean }[],
  deny: { target: string; permission: "read" | "write"; recursive?: boolean }[] = [],
  extra: { protectedPaths?: string[]; home?: string; systemDirs?: string[] } = {},
) {
  const scope = await Scope.fromRules(allow, deny);
  const steps = await planMounts(
    { scope, protectedPaths: extra.protectedPaths ?? [], networkAllow: [], home: extra.home },
    systemMounts(extra.systemDirs ?? []),
  );
  return steps.filter((step) => !BASE.some((base) => base.path === step.path));
}

describe("the bubblewrap mount plan is the scope", () => {
  it("shows the system directories read-only, keeps a symlinked one a symlink, and gives a private /proc, /dev, /tmp and home", async () => {
    const t = await tempRoot();
    await t.write("sys/usr/bin/tool", "");
    await symlink("usr/bin", t.path("sys/bin"));
    const scope = await Scope.fromRules([]);
    const steps = await planMounts(
      { scope, protectedPaths: [], networkAllow: [], home: "/home/someone" },
      systemMounts([t.path("sys/usr"), t.path("sys/bin"), t.path("sys/missing")]),
    );
    expect(steps).toEqual([
      { op: "proc", path: "/proc" },
      { op: "dev", path: "/dev" },
      { op: "tmpfs", path: "/tmp" },
      { op: "tmpfs", path: "/home/someone" },
      { op: "ro-bind", path: t.path("sys/usr") },
      { op: "symlink", path: t.path("sys/bin"), target: "usr/bin" },
    ]);
  });

  it("binds write rules writable and read rules read-only, parents before children, missing targets left out", async () => {
    const t = await tempRoot();
    await t.write("ws/out/x", "");
    await t.write("docs/readme", "");
    const steps = await plan([
      { target: t.path("ws"), permission: "read" },
      { target: t.path("ws/out"), permission: "write" },
      { target: t.path("docs"), permission: "read" },
      { target: t.path("not-yet"), permission: "write" },
    ]);
    expect(steps).toEqual([
      { op: "ro-bind", path: t.path("ws") },
      { op: "ro-bind", path: t.path("docs") },
      { op: "bind", path: t.path("ws/out") },
    ]);
  });

  it("hides denied files and directories, caps deny-write at read-only, and skips what is missing or not shown", async () => {
    const t = await tempRoot();
    await t.write("ws/.env", "SECRET");
    await t.write("ws/secrets/key", "k");
    await t.write("ws/vendor/lib.js", "");
    await t.write("elsewhere/.ssh/id", "");
    const steps = await plan(
      [{ target: t.path("ws"), permission: "write" }],
      [
        { target: t.path("ws/.env"), permission: "read" },
        { target: t.path("ws/secrets"), permission: "read" },
        { target: t.path("ws/vendor"), permission: "write" },
        { target: t.path("ws/not-there"), permission: "read" },
        { target: t.path("elsewhere/.ssh"), permission: "read" },
      ],
    );
    expect(steps).toEqual([
      { op: "bind", path: t.path("ws") },
      { op: "mask", path: t.path("ws/.env"), kind: "file" },
      { op: "mask", path: t.path("ws/secrets"), kind: "dir" },
      { op: "ro-bind", path: t.path("ws/vendor") },
    ]);
  });

  it("never mounts a scope target beneath a hidden path", async () => {
    const t = await tempRoot();
    await t.write("ws/private/public/x", "");
    const steps = await plan(
      [
        { target: t.path("ws"), permission: "write" },
        { target: t.path("ws/private/public"), permission: "write" },
      ],
      [{ target: t.path("ws/private"), permission: "read", recursive: false }],
    );
    expect(steps).toEqual([
      { op: "bind", path: t.path("ws") },
      { op: "mask", path: t.path("ws/private"), kind: "dir" },
    ]);
  });

  it("keeps podkit's own directories read-only where the scope would let them be written", async () => {
    const t = await tempRoot();
    await t.write("ws/.podkit/manifest.toml", "");
    await t.write("ro/.podkit/manifest.toml", "");
    const steps = await plan(
      [
        { target: t.path("ws"), permission: "write" },
        { target: t.path("ro"), permission: "read" },
      ],
      [],
      { protectedPaths: [t.path("ws/.podkit"), t.path("ro/.podkit"), t.path("ws/.missing")] },
    );
    expect(steps).toEqual([
      { op: "bind", path: t.path("ws") },
      { op: "ro-bind", path: t.path("ro") },
      { op: "ro-bind", path: t.path("ws/.podkit") },
    ]);
  });

  it("a non-recursive rule shows its target and files, not what its subdirectories hold", async () => {
    const t = await tempRoot();
    await t.write("ws/top.txt", "");
    await t.write("ws/sub/deep.txt", "");
    await t.write("ws/open/deep.txt", "");
    const steps = await plan([
      { target: t.path("ws"), permission: "read", recursive: false },
      { target: t.path("ws/open"), permission: "read" },
    ]);
    expect(steps).toEqual([
      { op: "ro-bind", path: t.path("ws") },
      { op: "ro-bind", path: t.path("ws/open") },
      { op: "mask", path: t.path("ws/sub"), kind: "dir" },
    ]);
  });
});
