import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Scope } from "@podkit/manifest";
import { describe, expect, it } from "vitest";
import { caught, collectWarnings, FIXED_CLOCK, useTempDirs, writeFiles } from "../../test/helpers.js";
import { PromptCatalog } from "../catalog/prompt-catalog.js";
import { PromptLoader } from "../prompt-ref/prompt-loader.js";
import { TemplateRenderError } from "../template/errors.js";
import { readAgentsMd } from "./agents-md.js";
import { InvalidSystemPromptTemplateError, SystemPromptRenderError } from "./errors.js";
import {
  buildSystemPromptContext,
  type ScopeView,
  type SystemPromptContext,
} from "./system-prompt-context.js";
import { joinSystemPromptSections, SystemPromptTemplate } from "./system-prompt-template.js";

const tempDir = useTempDirs();

const SCOPE: ScopeView = {
  readable: ["/r", "/w"],
  writable: ["/w"],
  summary: "Readable:\n  - /r\n  - /w [non-recursive]\nWritable:\n  - /w [non-recursive]",
};

function context(
  overrides: { agentsMd?: string; tools?: string[]; scope?: ScopeView } = {},
): SystemPromptContext {
  return buildSystemPromptContext({
    clock: FIXED_CLOCK,
    cwd: "/work/project",
    scope: overrides.scope ?? SCOPE,
    tools: overrides.tools ?? ["beta", "alpha"],
    agentsMd: overrides.agentsMd,
    language: "English",
  });
}

async function body(source: string, ctx = context(), loader = PromptLoader.create({})): Promise<string> {
  return (await SystemPromptTemplate.parse(source, loader).renderBody(ctx)).text;
}

async function renderError(source: string, ctx = context()): Promise<TemplateRenderError> {
  const error = await caught(body(source, ctx));
  expect(SystemPromptRenderError.isInstance(error)).toBe(true);
  const cause = (error as Error).cause;
  expect(TemplateRenderError.isInstance(cause)).toBe(true);
  return cause as TemplateRenderError;
}

describe("system prompt template (acceptance 14–22)", () => {
  it("[14] `hello` renders `hello`", async () => {
    expect(await body("hello")).toBe("hello");
  });

  it("[15] `date`, `time`, `datetime` are 2026-04-15, 09:30:00, 2026-04-15T09:30:00Z", async () => {
    expect(await body("{{ date }}|{{ time }}|{{ datetime }}")).toBe(
      "2026-04-15|09:30:00|2026-04-15T09:30:00Z",
    );
  });

  it('[16] `{{ tools | join(",") }}` renders `alpha,beta` for tools registered as beta, alpha', async () => {
    expect(await body('{{ tools | join(",") }}', context({ tools: ["beta", "alpha"] }))).toBe("alpha,beta");
  });

  it("[17] `literal {{ '{{' }} here` renders `literal {{ here`", async () => {
    expect(await body("literal {{ '{{' }} here")).toBe("literal {{ here");
  });

  it("[18] `scope.summary` renders exactly the summary of a recursive read rule on /r and a non-recursive write rule on /w", async () => {
    const scope = await Scope.fromRules([
      { target: "/r", permission: "read", recursive: true },
      { target: "/w", permission: "write", recursive: false },
    ]);
    expect(await body("{{ scope.summary }}", context({ scope }))).toBe(
      "Readable:\n  - /r\n  - /w [non-recursive]\nWritable:\n  - /w [non-recursive]",
    );
  });

  it("[19] `files` exists and is empty when there is no AGENTS.md", async () => {
    expect(await body("{% if files.agents_md is defined %}yes{% else %}no{% endif %}")).toBe("no");
    expect(await body("{{ files | length }}")).toBe("0");
  });

  describe("[20] strictness", () => {
    const failing: [string, string][] = [
      ["{{ ghost }}", "ghost"],
      ["{{ scope.ghost }}", "scope.ghost"],
      ["{% if ghost %}x{% endif %}", "ghost"],
      ["{% for x in ghost %}{% endfor %}", "ghost"],
      ["{{ ghost | upper }}", "ghost"],
      ["{{ ghost.deeper }}", "ghost"],
      ['{{ "a" | replace(ghost, "b") }}', "ghost"],
    ];
    for (const [source, variable] of failing) {
      it(`${source} fails naming \`${variable}\` and the line`, async () => {
        const error = await renderError(`first line\n${source}`);
        expect(error.variable).toBe(variable);
        expect(error.line).toBe(2);
        expect(error.template).toBe("[worker].system_prompt");
        expect(error.message).toContain(`'${variable}' is undefined`);
        expect(error.message).toContain("line 2");
      });
    }

    it('`{{ ghost | default("d") }}` renders `d`', async () => {
      expect(await body('{{ ghost | default("d") }}')).toBe("d");
    });

    it("`{% if ghost is defined %}` is false without error", async () => {
      expect(await body("{% if ghost is defined %}yes{% else %}no{% endif %}")).toBe("no");
      expect(await body("{% if ghost is undefined %}yes{% else %}no{% endif %}")).toBe("yes");
    });
  });

  describe("[21] Jinja2 constructs", () => {
    it("loops and loop.index", async () => {
      const source =
        '{% for x in ["a", "b", "c"] %}{{ loop.index }}{{ x }}{% if not loop.last %},{% endif %}{% endfor %}';
      expect(await body(source)).toBe("1a,2b,3c");
    });

    it("{% set %} at top level, and scoped to the iteration inside a loop", async () => {
      expect(await body('{% set greeting = "hi" %}{{ greeting }}')).toBe("hi");
      expect(
        await body("{% set x = 1 %}{% for i in [2, 3] %}{% set x = i %}{{ x }}{% endfor %}{{ x }}"),
      ).toBe("231");
    });

    it("macros with default arguments", async () => {
      const source =
        '{% macro tag(name, cls="item") %}<{{ name }} class="{{ cls }}">{% endmacro %}{{ tag("li") }}{{ tag("p", cls="note") }}';
      expect(await body(source)).toBe('<li class="item"><p class="note">');
    });

    it("{% raw %}", async () => {
      expect(await body("{% raw %}{{ not rendered }}{% endraw %}")).toBe("{{ not rendered }}");
    });

    it("whitespace control {%- and -%}", async () => {
      const source = "<ul>\n  {%- for x in [1, 2] %}\n  <li>{{ x }}</li>\n  {%- endfor %}\n</ul>";
      expect(await body(source)).toBe("<ul>\n  <li>1</li>\n  <li>2</li>\n</ul>");
      expect(await body("a   {%- if true -%}   b   {%- endif -%}   c")).toBe("abc");
    });
  });

  it("[22] one trailing newline of an included file is stripped (no stray blank line)", async () => {
    const workspace = await tempDir("ws");
    await writeFiles(workspace, { ".podkit/prompts/part.md": "included line\n" });
    const loader = PromptLoader.create({ workspace });
    expect(await body('before\n{% include "$workspace/part" %}\nafter\n', context(), loader)).toBe(
      "before\nincluded line\nafter",
    );
  });
});

describe("the example of seed 000", () => {
  const source = `You are operating in {{ cwd }}.
Today is {{ date }}.

{{ scope.summary }}

Available tools: {{ tools | join(", ") }}
{% if files.agents_md is defined -%}

{{ files.agents_md }}
{%- endif %}
`;
  const start = `You are operating in /work/project.\nToday is 2026-04-15.\n\n${SCOPE.summary}\n\nAvailable tools: alpha, beta\n`;

  it("renders with AGENTS.md, and then does not append it again", async () => {
    const template = SystemPromptTemplate.parse(source, PromptLoader.create({}));
    const ctx = context({ agentsMd: "Use pnpm." });
    expect(await template.renderBody(ctx)).toEqual({ text: `${start}Use pnpm.`, usedAgentsMd: true });
    const full = await template.render(ctx, await PromptCatalog.loadBuiltinOnly());
    expect(full.startsWith(`${start}Use pnpm.\n\n## Working boundaries\n`)).toBe(true);
    expect(full).not.toContain("## Project instructions");
  });

  it("renders without AGENTS.md", async () => {
    expect(await body(source)).toBe(start);
  });
});

describe("SystemPromptTemplate.parse", () => {
  it("reports a syntax error with the template name, line and column", () => {
    const error = (() => {
      try {
        SystemPromptTemplate.parse("fine\n{{ unclosed", PromptLoader.create({}));
      } catch (e) {
        return e;
      }
    })();
    expect(InvalidSystemPromptTemplateError.isInstance(error)).toBe(true);
    const e = error as InvalidSystemPromptTemplateError;
    expect([e.template, e.line, e.column]).toEqual(["[worker].system_prompt", 2, 12]);
    expect(e.message).toContain("line 2, column 12");
  });

  it("refuses unknown filters and tests at parse time, not at the first render", () => {
    expect(() => SystemPromptTemplate.parse("{{ cwd | shout }}", PromptLoader.create({}))).toThrow(
      /unknown filter 'shout'/,
    );
    expect(() => SystemPromptTemplate.parse("{{ cwd is shouty }}", PromptLoader.create({}))).toThrow(
      /unknown test/,
    );
  });

  it("does not read included files: a missing include fails the render, not the parse", async () => {
    const template = SystemPromptTemplate.parse('{% include "$workspace/nope" %}', PromptLoader.create({}));
    const error = await caught(template.renderBody(context()));
    expect(SystemPromptRenderError.isInstance(error)).toBe(true);
    expect(error.message).toContain("$workspace/nope.md");
  });
});

describe("trailing sections", () => {
  const catalog = PromptCatalog.loadBuiltinOnly();

  it("appends the working boundaries section after a blank line", async () => {
    const text = await SystemPromptTemplate.parse("Body.\n\n\n", PromptLoader.create({})).render(
      context(),
      await catalog,
    );
    expect(text.startsWith("Body.\n\n## Working boundaries\n")).toBe(true);
    expect(text.endsWith(SCOPE.summary)).toBe(true);
  });

  it("appends agents_md_section when AGENTS.md exists and the template did not use it", async () => {
    const text = await SystemPromptTemplate.parse("Body.", PromptLoader.create({})).render(
      context({ agentsMd: "Use pnpm." }),
      await catalog,
    );
    expect(text).toMatch(
      /^Body\.\n\n## Working boundaries\n[\s\S]*\n\n## Project instructions \(AGENTS\.md\)\n[\s\S]*Use pnpm\.$/,
    );
  });

  const usages: [string, string][] = [
    ["output", "{{ files.agents_md }}"],
    ["subscript", '{{ files["agents_md"] }}'],
    ["default filter", '{{ files.agents_md | default("") }}'],
    ["a loop over files", "{% for k, v in files %}{{ v }}{% endfor %}"],
    ["an alias", "{% set f = files %}{{ f.agents_md }}"],
    ["a filter over files", "{{ files | tojson }}"],
  ];
  for (const [how, source] of usages) {
    it(`does not append agents_md_section when the template used files.agents_md through ${how}`, async () => {
      const template = SystemPromptTemplate.parse(source, PromptLoader.create({}));
      const ctx = context({ agentsMd: "Use pnpm." });
      expect((await template.renderBody(ctx)).usedAgentsMd).toBe(true);
      const text = await template.render(ctx, await catalog);
      expect(text).not.toContain("## Project instructions");
      expect(text.match(/Use pnpm\./g)).toHaveLength(1);
    });
  }

  it("still appends agents_md_section when the template only tested `is defined`", async () => {
    const template = SystemPromptTemplate.parse(
      "{% if files.agents_md is defined %}has agents{% endif %}",
      PromptLoader.create({}),
    );
    const text = await template.render(context({ agentsMd: "Use pnpm." }), await catalog);
    expect(text).toContain("has agents");
    expect(text).toContain("## Project instructions (AGENTS.md)");
  });

  it("joins body and sections with one blank line, skips empty sections, trims trailing whitespace", () => {
    expect(joinSystemPromptSections("body  \n\n", ["\nsection one\n", "", "section two \n"])).toBe(
      "body\n\nsection one\n\nsection two",
    );
    expect(joinSystemPromptSections("", ["only"])).toBe("only");
  });
});

describe("buildSystemPromptContext", () => {
  it("reads the clock once and formats UTC without milliseconds", () => {
    let calls = 0;
    const ctx = buildSystemPromptContext({
      clock: () => {
        calls++;
        return new Date("2026-12-31T23:59:59.999Z");
      },
      cwd: "/x",
      scope: SCOPE,
      tools: [],
      language: "English",
    });
    expect(calls).toBe(1);
    expect([ctx.date, ctx.time, ctx.datetime]).toEqual(["2026-12-31", "23:59:59", "2026-12-31T23:59:59Z"]);
  });

  it("sorts tools by UTF-16 code unit and always provides files", () => {
    const ctx = buildSystemPromptContext({
      cwd: "/x",
      scope: SCOPE,
      tools: ["b", "B", "é", "a", "Z"],
      language: "en",
    });
    expect(ctx.tools).toEqual(["B", "Z", "a", "b", "é"]);
    expect(ctx.files).toEqual({});
  });

  it("refuses a relative cwd", () => {
    expect(() => buildSystemPromptContext({ cwd: "rel", scope: SCOPE, tools: [], language: "en" })).toThrow(
      /absolute/,
    );
  });
});

describe("readAgentsMd", () => {
  it("returns the whole file", async () => {
    const workspace = await tempDir("agents");
    const content = `# Rules\n${"x".repeat(70_000)}\n`;
    await writeFile(join(workspace, "AGENTS.md"), content);
    expect(await readAgentsMd(workspace)).toBe(content);
  });

  it("is silent when AGENTS.md is missing", async () => {
    const { warnings, sink } = collectWarnings();
    expect(await readAgentsMd(await tempDir("agents"), { onWarning: sink })).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it("warns and returns undefined for invalid UTF-8", async () => {
    const workspace = await tempDir("agents");
    await writeFile(join(workspace, "AGENTS.md"), Buffer.from([0x23, 0x20, 0xff, 0xfe, 0x0a]));
    const { warnings, sink } = collectWarnings();
    expect(await readAgentsMd(workspace, { onWarning: sink })).toBeUndefined();
    expect(warnings).toEqual([
      expect.objectContaining({ code: "agents_md.unreadable", file: join(workspace, "AGENTS.md") }),
    ]);
    expect(warnings[0]?.message).toContain("not valid UTF-8");
  });

  it("warns and returns undefined on an I/O error (AGENTS.md is a directory)", async () => {
    const workspace = await tempDir("agents");
    await mkdir(join(workspace, "AGENTS.md"));
    const { warnings, sink } = collectWarnings();
    expect(await readAgentsMd(workspace, { onWarning: sink })).toBeUndefined();
    expect(warnings).toHaveLength(1);
  });
});
