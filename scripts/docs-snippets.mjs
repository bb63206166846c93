// The docs test's machinery (scripts/docs-snippets.test.mjs states the rules): finds every fenced
// example of the README and docs/*.md with the `<!-- docs-test: … -->` directives right above it,
// type-checks the TypeScript ones as a consumer project that imports the built `@podkit/*`
// packages, and runs the shell ones (and the TypeScript ones marked `run`) against the built CLI in
// a scratch workspace with an empty HOME.
import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
export const CONTEXTS_FILE = join(REPO_ROOT, "scripts", "docs-snippet-contexts.ts");

export const TS_LANGS = new Set(["ts", "typescript", "tsx"]);
export const SH_LANGS = new Set(["sh", "bash", "shell"]);

/** A placeholder of the docs replaced before a shell example runs: where the reader's clone is. */
export const CLONE_PLACEHOLDER = "/path/to/podkit";

const DIRECTIVE = /^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$/;
const FENCE_OPEN = /^(\s*)(`{3,})\s*([\w+-]*)[^`]*$/;
const REASON = /\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*$/;

/** Thrown for a directive the test cannot follow; names the file and line. */
export class DocsDirectiveError extends Error {
  name = "DocsDirectiveError";
}

/** `text (reason)` → `{ text, reason }`; the reason must not be empty. */
function splitReason(rest, where) {
  const match = REASON.exec(rest);
  const reason = match?.[1]?.trim();
  if (!reason)
    throw new DocsDirectiveError(
      `${where}: a skip needs its reason in parentheses, e.g. "skip (needs ANTHROPIC_API_KEY)"`,
    );
  return { text: rest.slice(0, match.index).trim(), reason };
}

/** One `docs-test:` directive's text → its parsed form. */
export function parseDirective(text, where) {
  const [verb = "", ...restWords] = text.split(/\s+/);
  const rest = restWords.join(" ");
  switch (verb) {
    case "skip": {
      const { text: extra, reason } = splitReason(rest, where);
      if (extra) throw new DocsDirectiveError(`${where}: skip takes only (reason)`);
      return { verb, reason };
    }
    case "skip-commands": {
      const { text: list, reason } = splitReason(rest, where);
      const prefixes = [...list.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
      if (prefixes.length === 0 || list.replace(/"[^"]+"/g, "").trim() !== "") {
        throw new DocsDirectiveError(`${where}: skip-commands takes quoted command prefixes, then (reason)`);
      }
      return { verb, prefixes, reason };
    }
    case "context": {
      const names = rest.split(/[\s,]+/).filter(Boolean);
      if (names.length === 0) throw new DocsDirectiveError(`${where}: context needs at least one name`);
      return { verb, names };
    }
    case "matches": {
      const match = /^(.+?)\s+in\s+(\S+)$/.exec(rest);
      const types = match?.[1].split(/\s*,\s*/).filter(Boolean) ?? [];
      if (!match || types.length === 0) {
        throw new DocsDirectiveError(
          `${where}: matches takes type names and a module: "matches Tool<unknown>, ToolFactory in @podkit/llm-worker"`,
        );
      }
      return { verb, types, module: match[2] };
    }
    case "file":
      if (!rest || rest.startsWith("/") || rest.split("/").includes("..")) {
        throw new DocsDirectiveError(`${where}: file needs a relative path inside the workspace`);
      }
      return { verb, path: rest };
    case "setup":
      if (!rest) throw new DocsDirectiveError(`${where}: setup needs a shell command`);
      return { verb, command: rest };
    case "run":
    case "clone":
      if (rest) throw new DocsDirectiveError(`${where}: ${verb} takes no argument`);
      return { verb };
    default:
      throw new DocsDirectiveError(`${where}: unknown docs-test directive "${verb}"`);
  }
}

/**
 * Every fenced block of `markdown` with its language, code, the line of its first code line and
 * the directives on the lines right above its opening fence. A directive followed by anything but
 * a fence or another directive is an error, so none is silently ignored.
 */
export function extractFences(markdown, file) {
  const lines = markdown.split("\n");
  const fences = [];
  let pending = [];
  const stray = () =>
    new DocsDirectiveError(
      `${file}:${pending.at(-1).line}: a docs-test directive must stand right above a code fence`,
    );
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const directive = DIRECTIVE.exec(line);
    if (directive) {
      pending.push({ ...parseDirective(directive[1], `${file}:${i + 1}`), line: i + 1 });
      continue;
    }
    const open = FENCE_OPEN.exec(line);
    if (!open) {
      if (pending.length > 0) throw stray();
      continue;
    }
    const [, indent, ticks, lang] = open;
    const close = new RegExp(`^\\s*${ticks}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end])) end++;
    if (end === lines.length)
      throw new DocsDirectiveError(`${file}:${i + 1}: the code fence is never closed`);
    const code = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()))
      .join("\n");
    const directives = pending.map(({ line: _, ...parsed }) => parsed);
    fences.push({ file, line: i + 1, codeLine: i + 2, lang: lang.toLowerCase(), code, directives });
    pending = [];
    i = end;
  }
  if (pending.length > 0) throw stray();
  return fences;
}

/** The README and every docs/*.md page, as `{ file (relative to the repo), text }`. */
export function docPages(root = REPO_ROOT) {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs].map((file) => ({ file, text: readFileSync(join(root, file), "utf8") }));
}

const directive = (fence, verb) => fence.directives.find((d) => d.verb === verb);

/** The TypeScript fences of `pages` to type-check, and every skipped block with its reason. */
export function classify(pages) {
  const typescript = [];
  const skipped = [];
  for (const page of pages) {
    for (const fence of extractFences(page.text, page.file)) {
      const kind = TS_LANGS.has(fence.lang) ? "ts" : SH_LANGS.has(fence.lang) ? "sh" : "other";
      const skip = directive(fence, "skip");
      if (kind !== "other" && skip) {
        skipped.push({ where: `${fence.file}:${fence.line}`, kind, reason: skip.reason });
        continue;
      }
      if (kind === "ts") typescript.push(fence);
      else if (kind === "other" && fence.directives.some((d) => d.verb !== "file")) {
        throw new DocsDirectiveError(
          `${fence.file}:${fence.line}: a ${fence.lang || "plain"} fence takes only "file"`,
        );
      }
    }
  }
  return { typescript, skipped };
}

/** `// @context <name>` sections of the contexts file → Map name → declarations. */
export function readContexts(text = readFileSync(CONTEXTS_FILE, "utf8")) {
  const contexts = new Map();
  let name;
  for (const line of text.split("\n")) {
    const marker = /^\/\/ @context (\S+)\s*$/.exec(line);
    if (marker) {
      name = marker[1];
      contexts.set(name, []);
    } else if (name !== undefined) contexts.get(name).push(line);
  }
  return new Map([...contexts].map(([key, body]) => [key, body.join("\n").trim()]));
}

/** A file name for a fence: `docs-serve-md-L19.ts`. */
function snippetName(fence) {
  const ext = fence.lang === "tsx" ? "tsx" : "ts";
  return `${fence.file.replace(/[^A-Za-z0-9]+/g, "-")}-L${fence.line}.${ext}`;
}

/**
 * The module a TypeScript fence becomes: the declarations of its contexts, then its code, then
 * `export {}` (each fence is a module of its own: top-level await, no clashes between fences).
 * `offset` is how many lines precede the code.
 */
export function snippetModule(fence, contexts) {
  const names = directive(fence, "context")?.names ?? [];
  const preamble = names.map((name) => {
    const text = contexts.get(name);
    if (text === undefined)
      throw new DocsDirectiveError(
        `${fence.file}:${fence.line}: no context "${name}" in ${relative(REPO_ROOT, CONTEXTS_FILE)}`,
      );
    return `// context ${name}\n${text}`;
  });
  const head = preamble.length > 0 ? `${preamble.join("\n")}\n` : "";
  return {
    text: `${head}${fence.code}\n${matchesCheck(directive(fence, "matches"))}export {};\n`,
    offset: head.split("\n").length - 1,
  };
}

/**
 * For `matches T in module`: code that compiles only when the fence's own declaration of `T` and
 * the module's are assignable both ways, so a listing of an interface cannot drift from the code.
 */
function matchesCheck(matches) {
  if (!matches) return "";
  return matches.types
    .map((type, i) => {
      const theirs = `import("${matches.module}").${type}`;
      return [
        `declare const docsListed${i}: ${type};`,
        `const docsAsPackage${i}: ${theirs} = docsListed${i};`,
        `declare const docsPackage${i}: ${theirs};`,
        `const docsAsListed${i}: ${type} = docsPackage${i};`,
      ].join("\n");
    })
    .map((check) => `${check}\n`)
    .join("");
}

/**
 * A consumer project outside the repository: `package.json` (an ES module), and `node_modules`
 * holding the built `@podkit/*` packages and the few third-party packages the docs import (the AI
 * SDK providers the testkit page pairs with the double, zod and the provider spec a tool author
 * writes against, vitest, the OpenTelemetry API, Node's types) — what a user installs, linked
 * from this checkout.
 */
export function createConsumerProject(root = REPO_ROOT) {
  const dir = mkdtempSync(join(tmpdir(), "podkit-docs-test-"));
  const project = join(dir, "consumer");
  const modules = join(project, "node_modules");
  mkdirSync(join(modules, "@podkit"), { recursive: true });
  for (const name of readdirSync(join(root, "packages"))) {
    const manifest = join(root, "packages", name, "package.json");
    if (!existsSync(manifest)) continue;
    const { name: pkg } = JSON.parse(readFileSync(manifest, "utf8"));
    symlinkSync(join(root, "packages", name), join(modules, pkg));
  }
  const fromRoot = createRequire(join(root, "package.json"));
  const fromWorker = createRequire(join(root, "packages", "llm-worker", "package.json"));
  // The package's directory as Node would find it (its `exports` may not expose package.json).
  const link = (pkg, require) => {
    const found = require.resolve.paths(pkg)?.find((dir) => existsSync(join(dir, pkg, "package.json")));
    if (found === undefined) throw new Error(`docs test: ${pkg} is not installed; run pnpm install`);
    const target = realpathSync(join(found, pkg));
    mkdirSync(dirname(join(modules, pkg)), { recursive: true });
    symlinkSync(target, join(modules, pkg));
  };
  link("@types/node", fromRoot);
  link("vitest", fromRoot);
  link("@opentelemetry/api", fromRoot);
  for (const pkg of ["@ai-sdk/anthropic", "@ai-sdk/openai", "@ai-sdk/google", "@ai-sdk/provider", "zod"]) {
    link(pkg, fromWorker);
  }
  writeFileSync(
    join(project, "package.json"),
    `${JSON.stringify({ name: "docs-consumer", private: true, type: "module" }, null, 2)}\n`,
  );
  const home = join(dir, "home");
  const bin = join(dir, "bin");
  mkdirSync(home);
  mkdirSync(bin);
  const cli = join(root, "packages", "cli", "dist", "bin.js");
  writeFileSync(join(bin, "podkit"), `#!/bin/sh\nexec "${process.execPath}" "${cli}" "$@"\n`, {
    mode: 0o755,
  });
  return { dir, project, home, bin, cli };
}

/** What a strict consumer compiles with. */
export const CONSUMER_COMPILER_OPTIONS = {
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2023.d.ts"],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: ["node"],
  jsx: ts.JsxEmit.ReactJSX,
};

/**
 * Type-checks every fence in one program rooted in `project`. Returns, per fence, its
 * diagnostics as `docs/x.md:LINE: TSnnnn message` (a line in a context names the context).
 */
export function typecheckFences(fences, project, contexts = readContexts()) {
  const dir = join(project, "snippets");
  mkdirSync(dir, { recursive: true });
  const files = new Map();
  for (const fence of fences) {
    const path = join(dir, snippetName(fence));
    const module = snippetModule(fence, contexts);
    writeFileSync(path, module.text);
    files.set(path, { fence, offset: module.offset });
  }
  const program = ts.createProgram([...files.keys()], {
    ...CONSUMER_COMPILER_OPTIONS,
    typeRoots: [join(project, "node_modules", "@types")],
  });
  const results = new Map(fences.map((fence) => [fence, []]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    const entry = diagnostic.file && files.get(diagnostic.file.fileName);
    if (!entry) {
      // Outside any fence (a package's declarations): every fence's problem.
      for (const list of results.values()) list.push(`TS${diagnostic.code} ${message}`);
      continue;
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const codeLines = entry.fence.code.split("\n").length;
    const where =
      line < entry.offset
        ? `${entry.fence.file}:${entry.fence.line} (in a context)`
        : line >= entry.offset + codeLines
          ? `${entry.fence.file}:${entry.fence.line} (the listing differs from the package's declaration)`
          : `${entry.fence.file}:${entry.fence.codeLine + line - entry.offset}`;
    results.get(entry.fence).push(`${where}: TS${diagnostic.code} ${message}`);
  }
  return results;
}

/** The environment examples run in: the shim dir first on PATH, an empty HOME, nothing inherited. */
export function exampleEnv({ home, bin }) {
  return {
    PATH: [bin, dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
    HOME: home,
    LANG: "C.UTF-8",
    NO_COLOR: "1",
  };
}

/** Joins `\`-continued lines: `{ text, line, span }` (index of its first line in `code`, lines it took). */
function logicalLines(code) {
  const out = [];
  const lines = code.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let text = lines[i];
    const start = i;
    while (text.endsWith("\\") && i + 1 < lines.length) text = `${text.slice(0, -1)} ${lines[++i].trim()}`;
    out.push({ text, line: start, span: i - start + 1 });
  }
  return out;
}

/**
 * The bash script a shell fence becomes, and what it left out: each command line starting with
 * one of the fence's `skip-commands` prefixes is replaced by `:` (the script keeps its line count,
 * so an error's line maps back to the page); `/path/to/podkit` becomes this checkout.
 */
export function shellScript(fence, root = REPO_ROOT) {
  const rules = fence.directives
    .filter((d) => d.verb === "skip-commands")
    .flatMap(({ prefixes, reason }) => prefixes.map((prefix) => ({ prefix, reason, used: false })));
  const skipped = [];
  const body = [];
  let commands = 0;
  for (const { text, line, span } of logicalLines(fence.code)) {
    const command = text.trim();
    const rule = rules.find(({ prefix }) => command === prefix || command.startsWith(`${prefix} `));
    if (rule) {
      rule.used = true;
      skipped.push({ where: `${fence.file}:${fence.codeLine + line}`, command, reason: rule.reason });
      body.push(": skipped", ...Array(span - 1).fill(""));
      continue;
    }
    if (command !== "" && !command.startsWith("#")) commands++;
    body.push(text.replaceAll(CLONE_PLACEHOLDER, root), ...Array(span - 1).fill(""));
  }
  const stale = rules.find((rule) => !rule.used);
  if (stale) {
    throw new DocsDirectiveError(
      `${fence.file}:${fence.line}: skip-commands "${stale.prefix}" matches no command of the fence`,
    );
  }
  const setup = fence.directives.filter((d) => d.verb === "setup").map((d) => d.command);
  const head = [
    "set -eEuo pipefail",
    `trap 'echo "docs-test-failed:$LINENO:$?:$BASH_COMMAND" >&2' ERR`,
    ...setup,
  ];
  return { script: `${[...head, ...body].join("\n")}\n`, commands, skipped, offset: head.length };
}

/** The page line of a failed command from the marker the script's ERR trap prints, e.g. `docs/x.md:12: exit 2: podkit …`. */
export function failedCommand(stderr, fence, offset) {
  const match = /docs-test-failed:(\d+):(\d+):(.*)/.exec(stderr);
  if (!match) return undefined;
  const index = Number(match[1]) - offset - 1;
  const where =
    index < 0 ? `${fence.file}:${fence.line} (its setup)` : `${fence.file}:${fence.codeLine + index}`;
  return `${where}: exit ${match[2]}: ${match[3]}`;
}

/**
 * Runs `command args` in `cwd` with exactly `env`, stdin closed, in a process group of its own
 * (killed whole after `timeoutMs`); resolves to `{ code, stdout, stderr, ms }`, never rejects.
 */
export function runProcess(command, args, { cwd, env, timeoutMs = 120_000 }) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      stderr += `\ndocs-test: timed out after ${timeoutMs} ms`;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout, stderr: `${stderr}${error.message}`, ms: performance.now() - started });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr, ms: performance.now() - started });
    });
  });
}

/**
 * A fresh workspace for one page's examples under `project`; with `clone`, it also looks like the
 * root of a podkit clone (a copy of examples/, a link to the built packages/).
 */
export function pageWorkspace(project, file, { clone = false, root = REPO_ROOT } = {}) {
  const dir = join(project, "pages", `${file.replace(/[^A-Za-z0-9]+/g, "-")}${clone ? "-clone" : ""}`);
  mkdirSync(dir, { recursive: true });
  if (clone && !existsSync(join(dir, "packages"))) {
    cpSync(join(root, "examples"), join(dir, "examples"), { recursive: true });
    symlinkSync(join(root, "packages"), join(dir, "packages"));
  }
  return dir;
}

/** Transpiles a TypeScript fence to an ES module beside the consumer's node_modules. */
export function emitRunnable(fence, project) {
  const { outputText } = ts.transpileModule(fence.code, {
    fileName: basename(snippetName(fence)),
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      jsx: ts.JsxEmit.ReactJSX,
    },
  });
  const path = join(project, `run-${snippetName(fence).replace(/\.tsx?$/, ".mjs")}`);
  writeFileSync(path, outputText);
  return path;
}
