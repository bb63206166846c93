// Build step: ships examples/demo/workspace (the source of truth, beside the other examples) inside
// the package as dist/demo/workspace, so an installed `podkit demo` has its workspace too.
import { cpSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const from = fileURLToPath(new URL("../../../examples/demo/workspace", import.meta.url));
const to = fileURLToPath(new URL("../dist/demo/workspace", import.meta.url));
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
