// Runs inside the scratch project of scripts/pack-smoke.mjs (copied there, outside the
// repository): imports every installed @podkit package by name and checks that what each one
// finds at run time lives inside the install. Prints one problem per line; exit 1 if any.
//   node pack-smoke-probe.mjs <package name>...
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, sep } from "node:path";

const projectDir = realpathSync(process.cwd());
const require = createRequire(join(projectDir, "package.json"));
const problems = [];

function inside(path) {
  const rel = relative(projectDir, realpathSync(path));
  return !rel.startsWith(`..${sep}`) && rel !== "..";
}

for (const name of process.argv.slice(2)) {
  const packageDir = join(projectDir, "node_modules", name);
  if (!existsSync(packageDir) || !inside(packageDir)) {
    problems.push(`${name}: not installed as a real folder inside the scratch project`);
    continue;
  }
  let exports;
  try {
    exports = await import(name);
  } catch (error) {
    problems.push(`${name}: import failed: ${String(error.message).split("\n")[0]}`);
    continue;
  }
  if (name === "@podkit/pod") {
    const dir = exports.builtinPromptsDir?.();
    if (typeof dir !== "string" || !existsSync(join(dir, "default.md")) || !inside(dir)) {
      problems.push(`@podkit/pod: builtinPromptsDir() is ${dir}, which has no default.md inside the install`);
    } else if (!existsSync(join(dir, "internal.toml"))) {
      problems.push(`@podkit/pod: the builtin prompts at ${dir} lack internal.toml`);
    }
  }
  if (name === "@podkit/testkit") {
    const dir = exports.RECORDINGS_DIR;
    if (typeof dir !== "string" || !existsSync(dir) || !inside(dir) || readdirSync(dir).length === 0) {
      problems.push(`@podkit/testkit: RECORDINGS_DIR ${dir} is missing, empty or outside the install`);
    }
  }
  // A dependency resolved from the package must come from the scratch install, never a workspace.
  const manifest = require(`${name}/package.json`);
  const fromPackage = createRequire(join(packageDir, "package.json"));
  for (const dependency of Object.keys(manifest.dependencies ?? {})) {
    try {
      const resolved = fromPackage.resolve(`${dependency}/package.json`);
      if (!inside(resolved))
        problems.push(`${name}: ${dependency} resolves to ${resolved}, outside the install`);
    } catch (error) {
      // Packages that do not export ./package.json still have to be installed.
      if (error.code !== "ERR_PACKAGE_PATH_NOT_EXPORTED")
        problems.push(`${name}: ${dependency} is not installed`);
    }
  }
}

for (const problem of problems) console.log(problem);
process.exitCode = problems.length > 0 ? 1 : 0;
