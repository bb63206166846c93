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
  if (name === "@podkit/serve") problems.push(...(await probeViewer(exports)));
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

/**
 * The installed @podkit/serve serves its session viewer: the page, its stylesheet and its script
 * (static/ and the tsc-built dist/viewer/ must both be in the tarball).
 */
async function probeViewer(serve) {
  const { FsStore } = await import("@podkit/session-store");
  const store = new FsStore({ root: join(projectDir, "viewer-sessions") });
  const refuse = async () => {
    throw new Error("no pods in the pack smoke test");
  };
  const found = [];
  let server;
  try {
    server = await serve.startServer({ store, port: 0, pods: { create: refuse, restore: refuse } });
    for (const path of ["/", "/assets/viewer.css", "/assets/app.js", "/assets/session-page.js"]) {
      const response = await fetch(`${server.url}${path}`);
      if (response.status !== 200)
        found.push(`@podkit/serve: GET ${path} of the installed viewer answered ${response.status}`);
    }
    const sessions = await fetch(`${server.url}/sessions`);
    if (sessions.status !== 200) found.push(`@podkit/serve: GET /sessions answered ${sessions.status}`);
  } catch (error) {
    found.push(`@podkit/serve: the installed server failed: ${String(error.message).split("\n")[0]}`);
  } finally {
    await server?.close();
    await store.close();
  }
  return found;
}

for (const problem of problems) console.log(problem);
process.exitCode = problems.length > 0 ? 1 : 0;
