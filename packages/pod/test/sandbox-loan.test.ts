import type { SandboxConfig } from "@podkit/manifest";
import { describe, expect, it } from "vitest";
import { lendSandbox } from "../src/subpods/sandbox-loan.js";

const config = (backend: "os" | "none", allow: string[], fail = true): SandboxConfig => ({
  backend,
  fail_if_unavailable: fail,
  network: { allow },
});

describe("a child's [sandbox] is a loan too", () => {
  it("a sandboxed parent's child is sandboxed, even when its role's manifest says none", () => {
    expect(lendSandbox(config("os", []), config("none", [], false))).toEqual(config("os", [], true));
  });

  it("reaches only hosts its parent reaches; control: the hosts both name stay", () => {
    const lent = lendSandbox(
      config("os", ["api.github.com", "registry.npmjs.org"]),
      config("os", ["evil.example", "api.github.com"]),
    );
    expect(lent.network.allow).toEqual(["api.github.com"]);
  });

  it("an unsandboxed parent's child keeps its own (it can only be tighter)", () => {
    const child = config("os", ["x.org"], false);
    expect(lendSandbox(config("none", []), child)).toBe(child);
  });
});
