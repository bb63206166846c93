import type { SandboxConfig } from "@podkit/manifest";

/**
 * A child's `[sandbox]`, never looser than its parent's: a sandboxed parent's child is sandboxed
 * (whatever the role's own manifest says), may reach only hosts its parent may reach too (the
 * entries both lists name), and refuses to start without its sandbox whenever the parent does.
 * Its file rules need nothing here: they are its scope, which is already a loan.
 */
export function lendSandbox(parent: SandboxConfig, child: SandboxConfig): SandboxConfig {
  if (parent.backend === "none") return child;
  return {
    backend: "os",
    fail_if_unavailable: parent.fail_if_unavailable || child.fail_if_unavailable,
    network: { allow: child.network.allow.filter((host) => parent.network.allow.includes(host)) },
  };
}
