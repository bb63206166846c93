import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PromptCatalogError } from "../src/catalog/errors.js";
import { PromptCatalog } from "../src/catalog/prompt-catalog.js";
import { parsePromptPack } from "../src/catalog/prompt-pack.js";
import { caught, collectWarnings, useTempDirs, writeFiles } from "./helpers.js";

// Issue 10: pack keys named `__proto__` were dropped without a word; they warn like any unknown key.
const tempDir = useTempDirs();

describe("a pack key named __proto__", () => {
  it("warns like any unknown key in a workspace pack, naming file and key", async () => {
    const workspace = await tempDir("proto");
    await writeFiles(workspace, {
      ".podkit/prompts.toml": '[prompt]\nnotify_wrapper = "N {{ message }}"\n__proto__ = "x"\n',
    });
    const { warnings, sink } = collectWarnings();
    const catalog = await PromptCatalog.load({ userConfigDir: null, workspace, onWarning: sink });
    expect(catalog.render("notify_wrapper", { message: "m" })).toBe("N m");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      code: "prompt_pack.unknown_key",
      layer: "workspace",
      key: "__proto__",
      file: join(workspace, ".podkit", "prompts.toml"),
    });
    expect(warnings[0]?.message).toContain("unknown prompt key '__proto__' ignored");
  });

  it("warns for a top-level [__proto__] table too", () => {
    const { warnings, sink } = collectWarnings();
    parsePromptPack("[prompt]\n[__proto__]\na = 1\n", { layer: "user", file: "/u/prompts.toml" }, sink);
    expect(warnings).toMatchObject([{ code: "prompt_pack.unknown_key", key: "__proto__" }]);
  });

  it("is an error in the builtin layer, like any unknown key", async () => {
    const error = await caught(() =>
      parsePromptPack(
        '[prompt]\n__proto__ = "x"\n',
        { layer: "builtin", file: "/b/internal.toml" },
        () => {},
      ),
    );
    expect(PromptCatalogError.isInstance(error)).toBe(true);
    expect(error.message).toContain("__proto__");
  });

  it("never reaches a prototype", () => {
    parsePromptPack('[prompt]\n__proto__ = "x"\n', { layer: "user", file: "/u/prompts.toml" }, () => {});
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });
});
