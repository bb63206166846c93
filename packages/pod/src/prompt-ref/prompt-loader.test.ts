import { symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { caught, useTempDirs, writeFiles } from "../../test/helpers.js";
import { TemplateSyntaxError } from "../template/errors.js";
import {
  InvalidPromptRefError,
  PromptIoError,
  PromptNotFoundError,
  type PromptRefError,
  UnconfiguredPromptPrefixError,
  UnknownPromptPrefixError,
} from "./errors.js";
import { PromptLoader } from "./prompt-loader.js";
import { parsePromptRef } from "./prompt-ref.js";

const tempDir = useTempDirs();

/** A loader whose three roots are real temp directories filled with `files` (paths start with the prefix name). */
async function loaderWith(files: Record<string, string>) {
  const base = await tempDir("roots");
  await writeFiles(base, files);
  const roots = {
    podkit: join(base, "podkit"),
    user: join(base, "user"),
    workspace: join(base, "workspace"),
  };
  return { loader: new PromptLoader({ roots }), base, roots };
}

async function render(
  loader: PromptLoader,
  source: string,
  data: Record<string, unknown> = {},
): Promise<string> {
  const linked = await loader.link(loader.environment.compile("inline", source));
  return loader.environment.render(linked, data).text;
}

describe("prompt refs and loader (acceptance 23–30)", () => {
  it("[23] `$podkit/default` resolves with `.md` implied; a subdirectory ref resolves", async () => {
    const { loader } = await loaderWith({ "podkit/default.md": "D", "podkit/internal/deep/x.md": "X" });
    expect(await render(loader, '{% include "$podkit/default" %}')).toBe("D");
    expect(await render(loader, '{% include "$podkit/internal/deep/x" %}')).toBe("X");
    expect(await render(loader, '{% include "$podkit/default.md" %}')).toBe("D");
  });

  it("[23] the real builtin `$podkit/default` resolves from the package resources", async () => {
    const loader = PromptLoader.create({});
    const linked = await loader.load("$podkit/default");
    expect(linked.name).toBe("$podkit/default.md");
    expect(linked.compiled.source).toContain("{{ cwd }}");
  });

  it("[24] `$user/x` and `$workspace/x` resolve in their roots", async () => {
    const { loader } = await loaderWith({ "user/x.md": "from user", "workspace/x.md": "from workspace" });
    expect(await render(loader, '{% include "$user/x" %} / {% include "$workspace/x" %}')).toBe(
      "from user / from workspace",
    );
  });

  it("[24] PromptLoader.create maps $user to <config>/prompts and $workspace to <workspace>/.podkit/prompts", async () => {
    const config = await tempDir("config");
    const workspace = await tempDir("ws");
    await writeFiles(config, { "prompts/x.md": "U" });
    await writeFiles(workspace, { ".podkit/prompts/x.md": "W" });
    const loader = PromptLoader.create({ userConfigDir: config, workspace });
    expect(await render(loader, '{% include "$user/x" %}{% include "$workspace/x" %}')).toBe("UW");
  });

  it("[25] a missing file is PromptNotFoundError naming the ref and the including template", async () => {
    const { loader } = await loaderWith({
      "workspace/outer.md": 'line 1\n{% include "$workspace/missing" %}',
    });
    const error = await caught(loader.load("$workspace/outer"));
    expect(PromptNotFoundError.isInstance(error)).toBe(true);
    const e = error as PromptNotFoundError;
    expect(e.ref).toBe("$workspace/missing.md");
    expect(e.includedFrom).toBe("$workspace/outer.md");
    expect(e.line).toBe(2);
    expect(e.message).toContain("$workspace/missing.md");
    expect(e.message).toContain("included from $workspace/outer.md, line 2");
  });

  it("[26] an unconfigured prefix (root directory absent) and an unknown prefix are distinct errors", async () => {
    const { loader } = await loaderWith({ "podkit/a.md": "A" }); // no user/ directory
    const unconfigured = await caught(render(loader, '{% include "$user/x" %}'));
    expect(UnconfiguredPromptPrefixError.isInstance(unconfigured)).toBe(true);
    expect(unconfigured.message).toContain("does not exist");
    expect(UnknownPromptPrefixError.isInstance(unconfigured)).toBe(false);

    const unknown = await caught(render(loader, '{% include "$other/x" %}'));
    expect(UnknownPromptPrefixError.isInstance(unknown)).toBe(true);
    expect(UnconfiguredPromptPrefixError.isInstance(unknown)).toBe(false);
    expect(unknown.message).toContain("$other");

    const notSet = new PromptLoader({ roots: {} });
    const noRoot = await caught(render(notSet, '{% include "$workspace/x" %}'));
    expect(UnconfiguredPromptPrefixError.isInstance(noRoot)).toBe(true);
  });

  it("[27] an unqualified name at top level is an error; inside `$p/common/header`, `nested` resolves to `$p/common/nested`; from a root-level file the directory is empty", async () => {
    const { loader } = await loaderWith({
      "podkit/common/header.md": 'H[{% include "nested" %}]',
      "podkit/common/nested.md": "common nested",
      "podkit/top.md": '{% include "nested" %}',
      "podkit/nested.md": "root nested",
    });
    const topLevel = await caught(render(loader, '{% include "nested" %}'));
    expect(InvalidPromptRefError.isInstance(topLevel)).toBe(true);
    expect(topLevel.message).toContain("without a $prefix");
    expect(await render(loader, '{% include "$podkit/common/header" %}')).toBe("H[common nested]");
    expect(await render(loader, '{% include "$podkit/top" %}')).toBe("root nested");
  });

  it("[28] an explicit prefix inside an included file overrides relative resolution", async () => {
    const { loader } = await loaderWith({
      "podkit/common/header.md": '{% include "$workspace/nested" %}',
      "podkit/common/nested.md": "wrong",
      "workspace/nested.md": "workspace nested",
    });
    expect(await render(loader, '{% include "$podkit/common/header" %}')).toBe("workspace nested");
  });

  describe("[29] invalid references", () => {
    const invalid = [
      "$p/../etc/passwd",
      "$p/./x",
      "$p//x",
      "$p/x\\y",
      "/etc/passwd",
      "$p/x\u0000y",
      "$p/",
      "$p",
    ];
    for (const raw of invalid) {
      it(`${JSON.stringify(raw)} is InvalidPromptRefError`, () => {
        const ref = raw.replace("$p", "$workspace");
        let error: unknown;
        try {
          parsePromptRef(ref, undefined);
        } catch (e) {
          error = e;
        }
        expect(InvalidPromptRefError.isInstance(error)).toBe(true);
        expect((error as PromptRefError).ref).toBe(ref);
      });
    }

    it("relative names with `..` are refused inside files too", async () => {
      const { loader } = await loaderWith({ "workspace/a/b.md": '{% include "../../secret" %}' });
      expect(InvalidPromptRefError.isInstance(await caught(loader.load("$workspace/a/b")))).toBe(true);
    });

    it("a symlink inside a prefix root pointing outside it is refused", async () => {
      const { loader, base, roots } = await loaderWith({
        "workspace/ok.md": "ok",
        "outside/secret.md": "SECRET",
      });
      await symlink(join(base, "outside", "secret.md"), join(roots.workspace, "leak.md"));
      await symlink(join(base, "outside"), join(roots.workspace, "dir"));
      for (const ref of ["$workspace/leak", "$workspace/dir/secret"]) {
        const error = await caught(render(loader, `{% include "${ref}" %}`));
        expect(InvalidPromptRefError.isInstance(error)).toBe(true);
        expect(error.message).toContain("outside the $workspace root");
        expect(error.message).not.toContain("SECRET");
      }
    });

    it("a symlink that stays inside the root is followed", async () => {
      const { loader, roots } = await loaderWith({ "workspace/real.md": "real" });
      await symlink(join(roots.workspace, "real.md"), join(roots.workspace, "alias.md"));
      expect(await render(loader, '{% include "$workspace/alias" %}')).toBe("real");
    });
  });

  it("[30] a syntax error inside an included file rejects the render promise and names the included file and line", async () => {
    const { loader, roots } = await loaderWith({ "workspace/broken.md": "ok line\n{% if %}\n" });
    const promise = render(loader, 'before {% include "$workspace/broken" %} after');
    const error = await caught(promise);
    expect(TemplateSyntaxError.isInstance(error)).toBe(true);
    const e = error as TemplateSyntaxError;
    expect(e.template).toBe("$workspace/broken.md");
    expect(e.file).toBe(join(roots.workspace, "broken.md"));
    expect(e.line).toBe(2);
    expect(e.message).toContain("$workspace/broken.md");
  });

  it("reads invalid UTF-8 as PromptIoError", async () => {
    const { loader, roots } = await loaderWith({ "workspace/ok.md": "" });
    await writeFiles(roots.workspace, { "bad.md": Buffer.from([0xff, 0xfe]) as unknown as string });
    expect(PromptIoError.isInstance(await caught(loader.load("$workspace/bad")))).toBe(true);
  });

  it("`ignore missing` renders nothing for a missing file or an absent root", async () => {
    const { loader } = await loaderWith({ "podkit/a.md": "A" });
    expect(
      await render(
        loader,
        'x{% include "$podkit/none" ignore missing %}{% include "$user/none" ignore missing %}y',
      ),
    ).toBe("xy");
  });

  it("reads and compiles each file once per loader, even when included many times", async () => {
    const { loader } = await loaderWith({
      "podkit/part.md": "p",
      "podkit/twice.md": '{% include "part" %}{% include "part" %}',
    });
    const before = loader.environment.compiledCount;
    expect(await render(loader, '{% include "$podkit/twice" %}{% include "$podkit/part" %}')).toBe("ppp");
    expect(await render(loader, '{% include "$podkit/part" %}')).toBe("p");
    expect(loader.environment.compiledCount - before).toBe(4); // twice.md, part.md and the two inline templates
  });

  it("links include cycles and stops runaway recursion with an error", async () => {
    const { loader } = await loaderWith({
      "podkit/a.md": '{% include "b" %}',
      "podkit/b.md": '{% include "a" %}',
    });
    const error = await caught(render(loader, '{% include "$podkit/a" %}'));
    expect(error.message).toMatch(/nest deeper than 100 levels/);
  });

  it("imports macros from a prompt file", async () => {
    const { loader } = await loaderWith({
      "podkit/macros.md":
        '{% macro shout(x) %}{{ x | upper }}!{% endmacro %}{% set _private = 1 %}{% set version = "v1" %}',
    });
    expect(
      await render(
        loader,
        '{% import "$podkit/macros" as m %}{{ m.shout("hi") }} {{ m.version }} {{ m._private is defined }}',
      ),
    ).toBe("HI! v1 false");
    expect(await render(loader, '{% from "$podkit/macros" import shout as s %}{{ s("a") }}')).toBe("A!");
  });
});
