import { chmod, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readServeTokensFile } from "../src/session/serve-tokens-file.js";
import { runBin } from "./run-bin.js";

// `podkit serve --tokens-file`: who holds which token, one holder a line (docs/serve.md, Security).

const TOKEN = "3b1f0d2c9e8a7b6c5d4e3f2a1b0c9d8e";
const DIGEST = "5c0e4b7f2a91d8e36b1f0a9c4d72e85f13b6a0d9e4c27f8b51a3d60e9c7f2b48";
let dir: string;
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(text: string, mode = 0o600): Promise<string> {
  dir = await realpath(await mkdtemp(join(tmpdir(), "podkit-tokens-")));
  const path = join(dir, "tokens");
  await writeFile(path, text);
  await chmod(path, mode);
  return path;
}

describe("the serve tokens file", () => {
  it("reads holders with their tokens or digests; comments and blank lines are skipped", async () => {
    const path = await file(`# who may use this server\n\nalice   ${TOKEN}\r\nci-bot\tsha256:${DIGEST}\n`);
    const warnings: string[] = [];
    expect(await readServeTokensFile(path, "/", (w) => warnings.push(w))).toEqual([
      { holder: "alice", token: TOKEN },
      { holder: "ci-bot", sha256: DIGEST },
    ]);
    expect(warnings).toEqual([]);
  });

  it("names the file and line of a malformed entry, with what to write instead", async () => {
    const cases: [string, RegExp][] = [
      [`alice ${TOKEN} extra`, /tokens:2: expected "<name> <token>", got 3 field\(s\)/],
      ["alice", /tokens:2: expected "<name> <token>", got 1 field\(s\)/],
      [`al/ice ${TOKEN}`, /tokens:2: invalid holder name "al\/ice"/],
      ["alice short", /tokens:2: the token of "alice" is too short/],
      ["alice sha256:abc", /tokens:2: the sha256 of "alice" is not 64 hex digits/],
    ];
    for (const [line, message] of cases) {
      const path = await file(`# comment\n${line}\n`);
      await expect(readServeTokensFile(path, "/", () => {})).rejects.toThrow(message);
      await rm(dir, { recursive: true, force: true });
    }
    const empty = await file("# nobody yet\n");
    await expect(readServeTokensFile(empty, "/", () => {})).rejects.toThrow(/names no holder/);
  });

  it("warns when tokens in the clear can be read by other users; digests need no warning", async () => {
    const warnings: string[] = [];
    const open = await file(`alice ${TOKEN}\n`, 0o644);
    await readServeTokensFile(open, "/", (w) => warnings.push(w));
    expect(warnings).toEqual([expect.stringMatching(/other users of this machine can read it: chmod 600/)]);
    await rm(dir, { recursive: true, force: true });
    const digests = await file(`alice sha256:${DIGEST}\n`, 0o644);
    const none: string[] = [];
    await readServeTokensFile(digests, "/", (w) => none.push(w));
    expect(none).toEqual([]);
  });

  it("`podkit serve` with a bad or missing file exits 1 with the error and a hint, before listening", async () => {
    const bad = await file(`alice ${TOKEN}\nbob\n`);
    const refused = await runBin(["serve", "--port", "0", "--tokens-file", bad], { cwd: dir, env: {} });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `error: ${bad}:2: expected "<name> <token>", got 1 field(s)\nhint: one holder a line: a name, a space, then the token or "sha256:<hex>"\n`,
    );
    const missing = await runBin(["serve", "--port", "0"], {
      cwd: dir,
      env: { PODKIT_SERVE_TOKENS_FILE: "absent" },
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(new RegExp(`^error: cannot read the tokens file ${dir}/absent: ENOENT`));
    expect(missing.stdout).not.toContain("listening");
  });
});
