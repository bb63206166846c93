#!/usr/bin/env node
// Build step of @podkit/pod: copies the repository's resources/prompts into the package
// (packages/pod/resources/prompts, gitignored, listed in `files`), where builtinPromptsDir()
// finds it from dist/ in the repository and in a published install alike.
import { cpSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const from = resolve(packageDir, "../../resources/prompts");
const to = resolve(packageDir, "resources/prompts");
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
