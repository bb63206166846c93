import { join } from "node:path";
import { loadManifest, ManifestError } from "@podkit/manifest";
import { describe, expect, it } from "vitest";
import { parsePromptRef } from "../src/prompt-ref/prompt-ref.js";
import { useTempDirs, writeFiles } from "./helpers.js";

const tempDir = useTempDirs();

/** `$prefix` references, valid and not: what the manifest accepts as `prompt_pack`, the pod resolves. */
const REFS = [
  "$user/packs/ja.toml",
  "$workspace/packs/ja.toml",
  "$podkit/default",
  "$workspace/a/b/c.toml",
  "$prompts/ja.toml",
  "$Workspace/x.toml",
  "$1user/x.toml",
  "$user",
  "$user/",
  "$user//x.toml",
  "$user/./x.toml",
  "$user/../secrets.toml",
  "$user/a/../../x.toml",
  "$workspace/a\\b.toml",
  "$workspace/x.toml/",
];

describe("the $prefix rules have one source (the manifest's spellPromptRef)", () => {
  it("a prompt_pack reference the manifest accepts is one the pod parses, and the other way round", async () => {
    const root = await tempDir("refs");
    await writeFiles(root, {
      "proj/.podkit/manifest.toml": `[pod]\nname = "p"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n`,
    });
    const env = { cwd: join(root, "proj"), home: join(root, "home"), env: {} };
    const verdicts: string[] = [];
    for (const ref of REFS) {
      const manifest = await loadManifest({ env, overlays: [`pod.prompt_pack=${ref}`] }).then(
        () => "ok",
        (error: unknown) => {
          if (!ManifestError.isInstance(error)) throw error;
          return "refused";
        },
      );
      let pod = "ok";
      try {
        parsePromptRef(ref, undefined);
      } catch {
        pod = "refused";
      }
      verdicts.push(`${ref}: manifest ${manifest}, pod ${pod}`);
    }
    expect(verdicts).toEqual(
      REFS.map((ref, i) => {
        const verdict = i < 4 ? "ok" : "refused";
        return `${ref}: manifest ${verdict}, pod ${verdict}`;
      }),
    );
  });
});
