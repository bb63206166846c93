import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifest, ManifestError, PodkitManifestError } from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

const HEAD = `[pod]\nname = "reviewer"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n`; // lines 1-4

let t: TempRoot;
beforeEach(async () => {
  t = await makeTempRoot();
});
afterEach(async () => {
  await t.cleanup();
});

/** Loads `m.toml` (cwd = temp root, so the message shows it as `m.toml`) and returns the error. */
async function failure(source: string | Uint8Array, overlays: string[] = []): Promise<ManifestError> {
  const file = await t.write("m.toml", source);
  const error = await loadManifest({ file, env: t.env(), overlays }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!ManifestError.isInstance(error)) throw new Error(`expected a ManifestError, got ${String(error)}`);
  return error;
}

interface Case {
  name: string;
  source: string;
  /** `file:line` (and column) the message must start with. */
  at: string;
  key?: string;
  says: string;
  kind?: ManifestError["kind"];
}

const cases: Case[] = [
  {
    name: "an unterminated string (syntax)",
    source: `${HEAD}[worker]\nlanguage = "English\n`,
    at: "m.toml:6:20",
    says: "TOML syntax error: unterminated string (the closing quote is missing on this line)",
    kind: "syntax",
  },
  {
    name: "a table defined twice (syntax)",
    source: `${HEAD}[worker]\nmax_turns = 2\n[worker]\nmax_tokens = 3\n`,
    at: "m.toml:7:",
    says: "redefine",
    kind: "syntax",
  },
  {
    name: "an unquoted string value (syntax)",
    source: `${HEAD}[worker]\nlanguage = English\n`,
    at: "m.toml:6:",
    says: "TOML syntax error",
    kind: "syntax",
  },
  {
    name: "a string where an integer belongs",
    source: `${HEAD}[worker]\nmax_turns = "ten"\n`,
    at: "m.toml:6",
    key: "worker.max_turns",
    says: 'expected an integer, got "ten"',
  },
  {
    name: "a float where an integer belongs",
    source: `${HEAD}[worker]\nmax_tokens = 1.5\n`,
    at: "m.toml:6",
    key: "worker.max_tokens",
    says: "expected an integer, got float 1.5",
  },
  {
    name: "a number where a string belongs",
    source: `[pod]\nname = 42\n[model]\nref = "openai/gpt-4o"\n`,
    at: "m.toml:2",
    key: "pod.name",
    says: "expected a string, got integer 42",
  },
  {
    name: "a table where a list of rules belongs",
    source: `${HEAD}[scope.allow]\ntarget = "."\npermission = "read"\n`,
    at: "m.toml:5",
    key: "scope.allow",
    says: "expected an array, got a table",
  },
  {
    name: "an unknown key with a near miss",
    source: `${HEAD}[worker]\nsytem_prompt = "hi"\n`,
    at: "m.toml:6",
    key: "worker.sytem_prompt",
    says: 'unknown key; did you mean "system_prompt"?',
  },
  {
    name: "an unknown top-level table",
    source: `${HEAD}\n[toolz]\nenabled = ["grep"]\n`,
    at: "m.toml:6",
    key: "toolz",
    says: "unknown table",
  },
  {
    name: "an unknown key inside an array of tables",
    source: `${HEAD}[[scope.allow]]\ntarget = "."\npermission = "read"\n[[scope.allow]]\ntarget = "src"\npermission = "write"\nglob = "*.ts"\n`,
    at: "m.toml:11",
    key: "scope.allow[1].glob",
    says: "unknown key",
  },
  {
    name: "a bad permission value",
    source: `${HEAD}[[scope.allow]]\ntarget = "."\npermission = "read"\n[[scope.allow]]\ntarget = "src"\npermission = "exec"\n`,
    at: "m.toml:10",
    key: "scope.allow[1].permission",
    says: 'expected "read" | "write", got "exec"',
  },
  {
    name: "a bad reasoning effort",
    source: `${HEAD}[worker]\nreasoning = "extreme"\n`,
    at: "m.toml:6",
    key: "worker.reasoning",
    says: 'expected an effort ("minimal" | "low" | "medium" | "high") or a token budget (integer ≥ 1), got "extreme"',
  },
  {
    name: "an unknown provider",
    source: `[pod]\nname = "p"\n[model]\nref = "azure/gpt-4o"\n`,
    at: "m.toml:4",
    key: "model.ref",
    says: 'unknown provider "azure"',
  },
  {
    name: "a model ref without a provider",
    source: `[pod]\nname = "p"\n[model]\nref = "gpt-4o"\n`,
    at: "m.toml:4",
    key: "model.ref",
    says: 'expected "<provider>/<model id>"',
  },
  {
    name: "an empty pod name",
    source: `[pod]\nname = ""\n[model]\nref = "openai/gpt-4o"\n`,
    at: "m.toml:2",
    key: "pod.name",
    says: "must not be empty",
  },
  {
    name: "a blank pod name",
    source: `[model]\nref = "openai/gpt-4o"\n\n[pod]\nname = "   "\n`,
    at: "m.toml:5",
    key: "pod.name",
    says: "must not be empty",
  },
  {
    name: "max_turns = 0",
    source: `${HEAD}[worker]\nmax_turns = 0\n`,
    at: "m.toml:6",
    key: "worker.max_turns",
    says: "must be ≥ 1, got integer 0",
  },
  {
    name: "a temperature out of range",
    source: `${HEAD}[worker]\ntemperature = 3.5\n`,
    at: "m.toml:6",
    key: "worker.temperature",
    says: "must be ≤ 2, got float 3.5",
  },
  {
    name: "a renamed key (worker.system)",
    source: `${HEAD}[worker]\nsystem = "You review code."\n`,
    at: "m.toml:6",
    key: "worker.system",
    says: 'renamed: use "worker.system_prompt" instead',
  },
  {
    name: "a renamed key (model.name)",
    source: `[pod]\nname = "p"\n[model]\nname = "claude"\n`,
    at: "m.toml:4",
    key: "model.name",
    says: 'renamed: use "model.ref" instead',
  },
  {
    name: "a renamed rule key (scope.allow.path)",
    source: `${HEAD}[[scope.allow]]\npath = "src"\npermission = "read"\n`,
    at: "m.toml:6",
    key: "scope.allow[0].path",
    says: 'renamed: use "scope.allow.target" instead',
  },
  {
    name: "a rule without a target",
    source: `${HEAD}[[scope.deny]]\npermission = "read"\n`,
    at: "m.toml:5",
    key: "scope.deny[0].target",
    says: "missing required key (expected a string)",
  },
  {
    name: "a home-relative scope target",
    source: `${HEAD}[[scope.allow]]\ntarget = "~/notes"\npermission = "read"\n`,
    at: "m.toml:6",
    key: "scope.allow[0].target",
    says: '"~" is not expanded',
  },
  {
    name: "a $prefix reference used as a scope target",
    source: `${HEAD}[[scope.allow]]\ntarget = "$workspace/src"\npermission = "read"\n`,
    at: "m.toml:6",
    key: "scope.allow[0].target",
    says: "cannot be a $prefix reference",
  },
  {
    name: ".. after a missing part of a scope target",
    source: `${HEAD}[[scope.allow]]\ntarget = "nothing/../../etc"\npermission = "read"\n`,
    at: "m.toml:6",
    key: "scope.allow[0].target",
    says: '".." follows',
  },
  {
    name: "a prompt pack with an unknown prefix",
    source: `[pod]\nname = "p"\nprompt_pack = "$prompts/ja.toml"\n[model]\nref = "openai/gpt-4o"\n`,
    at: "m.toml:3",
    key: "pod.prompt_pack",
    says: "unknown prompt prefix $prompts",
  },
  {
    name: "a prompt pack reference that climbs out of its prefix",
    source: `[pod]\nname = "p"\nprompt_pack = "$user/../secrets.toml"\n[model]\nref = "openai/gpt-4o"\n`,
    at: "m.toml:3",
    key: "pod.prompt_pack",
    says: "'..' segments are not allowed",
  },
  {
    name: "a relative prompt pack that does not exist next to the file",
    source: `[pod]\nname = "p"\nprompt_pack = "packs/ja.toml"\n[model]\nref = "openai/gpt-4o"\n`,
    at: "m.toml:3",
    key: "pod.prompt_pack",
    says: "prompt pack not found",
  },
  {
    name: "a non-http base_url",
    source: `${HEAD}base_url = "ftp://models.example"\n`,
    at: "m.toml:5",
    key: "model.base_url",
    says: "expected an http:// or https:// URL",
  },
  {
    name: "openai-compatible without base_url",
    source: `[pod]\nname = "p"\n[model]\nref = "openai-compatible/llama-3"\n`,
    at: "m.toml:4",
    key: "model.ref",
    says: "needs model.base_url",
  },
  {
    name: "compaction threshold above the request threshold",
    source: `${HEAD}[compaction]\nthreshold = 160000\nrequest_threshold = 150000\n`,
    at: "m.toml:6",
    key: "compaction.threshold",
    says: "must not exceed compaction.request_threshold",
  },
  {
    name: "two MCP servers with the same name",
    source: `${HEAD}[[mcp.server]]\nname = "gh"\ncommand = "npx"\n[[mcp.server]]\nname = "gh"\ncommand = "gh-mcp"\n`,
    at: "m.toml:9",
    key: "mcp.server[1].name",
    says: 'duplicate MCP server name "gh"',
  },
  {
    name: "a missing pod name after the cascade",
    source: `[model]\nref = "openai/gpt-4o"\n`,
    at: "m.toml: pod.name",
    says: "required, but no layer sets it",
  },
];

describe("malformed manifests", () => {
  it.each(cases)("rejects $name, naming file, line and key", async (c) => {
    const error = await failure(c.source);
    expect(error.message.startsWith(c.at), error.message).toBe(true);
    if (c.key) expect(error.message).toContain(`${c.key}: `);
    expect(error.message).toContain(c.says);
    expect(error.kind).toBe(c.kind ?? "schema");
    expect(error.file).toBe(t.path("m.toml"));
    expect(error.hint).toBeTruthy();
    expect(PodkitManifestError.isInstance(error)).toBe(true);
  });

  it("shows the offending line with a caret under the column for a syntax error", async () => {
    const error = await failure(`${HEAD}[worker]\nmax_turns = 5 6\n`);
    expect(error).toMatchObject({ kind: "syntax", line: 6, column: 15 });
    expect(error.message).toBe(
      "m.toml:6:15: TOML syntax error: each key-value declaration must be followed by an end-of-line\n  6 | max_turns = 5 6\n    |               ^",
    );
    expect(error.cause).toBeInstanceOf(Error);
  });

  it("lists every problem of a layer in line order", async () => {
    const error = await failure(`${HEAD}[worker]\nmax_turns = 0\nlanguage = ""\nsystem = "x"\n`);
    expect(error.issues.map((i) => [i.line, i.keyPath])).toEqual([
      [6, "worker.max_turns"],
      [7, "worker.language"],
      [8, "worker.system"],
    ]);
    expect(error.message.split("\n")).toHaveLength(3);
  });

  it("rejects bytes that are not UTF-8, naming the file and the line of the first bad byte", async () => {
    const error = await failure(new Uint8Array([0x5b, 0x70, 0x6f, 0x64, 0x5d, 0x0a, 0xff, 0xfe]));
    expect(error.kind).toBe("io");
    expect(error.message).toBe("m.toml:2: is not valid UTF-8 text");
    expect(error.line).toBe(2);
  });

  it("names a missing explicit file and says what to check", async () => {
    const error = await loadManifest({ file: "nope.toml", env: t.env() }).catch((e: unknown) => e);
    expect(ManifestError.isInstance(error) && error.message).toBe("nope.toml: manifest file not found");
    expect(ManifestError.isInstance(error) && error.hint).toContain("check the path");
  });

  it("names the layer file for problems in the user manifest", async () => {
    await t.write("home/.config/podkit/manifest.toml", "[worker]\n\nmax_turns = -1\n");
    const error = await failure(HEAD);
    expect(error.file).toBe(t.path("home/.config/podkit/manifest.toml"));
    expect(error.message).toBe(
      "home/.config/podkit/manifest.toml:3: worker.max_turns: must be ≥ 1, got integer -1",
    );
  });

  it("names the overlay and key for a bad --set value", async () => {
    const error = await failure(HEAD, ["worker.max_turns=0"]);
    expect(error.message).toBe("--set worker.max_turns=0: worker.max_turns: must be ≥ 1, got integer 0");
    const renamed = await failure(HEAD, ["worker.system=hello"]);
    expect(renamed.message).toContain('renamed: use "worker.system_prompt" instead');
  });

  it("rejects a --set without = or with an indexed key", async () => {
    const noValue = await failure(HEAD, ["worker.max_turns"]);
    expect(noValue).toMatchObject({ kind: "overlay" });
    expect(noValue.message).toBe("--set worker.max_turns: expected key=value");
    const indexed = await failure(HEAD, ["scope.allow[0].target=x"]);
    expect(indexed.message).toContain("is not a dotted key path");
    expect(indexed.hint).toContain("--set worker.max_turns=20");
  });
});
