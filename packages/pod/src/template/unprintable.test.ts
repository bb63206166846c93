import nunjucks from "nunjucks";
import { describe, expect, it } from "vitest";
import { FIXED_CLOCK } from "../../test/helpers.js";
import { buildSystemPromptContext } from "../system-prompt/system-prompt-context.js";
import { linkStandalone, TemplateEnvironment } from "./environment.js";
import { TemplateRenderError, TemplateUnprintableValueError } from "./errors.js";
import type { LinkedTemplate } from "./scope.js";

// Issue 36: printing a list or a mapping is an error naming the expression, template, line and
// what to print instead, never `[object Object]` or a bare comma list in a prompt.

const env = new TemplateEnvironment();

// The real variables of a system prompt: `scope` and `files` are mappings, `tools` a list.
const data = {
  ...buildSystemPromptContext({
    clock: FIXED_CLOCK,
    cwd: "/work/project",
    scope: { readable: ["/r"], writable: ["/w"], summary: "Readable: /r" },
    tools: ["beta", "alpha"],
    agentsMd: "be kind",
    language: "English",
  }),
  x: { y: { z: 1 } },
  empty: {},
};

function link(name: string, source: string, deps: Record<string, LinkedTemplate> = {}): LinkedTemplate {
  if (Object.keys(deps).length === 0) return linkStandalone(env.compile(name, source));
  return { name, file: undefined, compiled: env.compile(name, source), deps: new Map(Object.entries(deps)) };
}

function render(source: string): string {
  return env.render(link("main", source), data).text;
}

function printFailure(template: LinkedTemplate): TemplateUnprintableValueError {
  try {
    env.render(template, data);
  } catch (error) {
    expect(TemplateUnprintableValueError.isInstance(error), String(error)).toBe(true);
    return error as TemplateUnprintableValueError;
  }
  throw new Error(`expected ${template.compiled.source} to fail`);
}

function failure(source: string): TemplateUnprintableValueError {
  return printFailure(link("main", source));
}

describe("printing a list or a mapping is a render error", () => {
  it.each([
    ["a mapping variable", "{{ scope }}", "scope", "mapping", ["`scope.readable`", "`scope.summary`"]],
    ["a list variable", "{{ tools }}", "tools", "list", ['`tools | join(", ")`', "`tools | tojson`"]],
    ["the files mapping", "{{ files }}", "files", "mapping", ["`files.agents_md`", "`files | tojson`"]],
    ["an attribute that is a mapping", "{{ x.y }}", "x.y", "mapping", ["`x.y.z`"]],
    ["a subscript that is a list", "{{ scope['readable'] }}", "scope.readable", "list", ["join"]],
    ["an empty mapping", "{{ empty }}", "empty", "mapping", ["(it has none now)", "`empty | tojson`"]],
    [
      "a filter result that is a list",
      "{{ tools | sort }}",
      "tools | sort",
      "list",
      ["`tools | sort | join"],
    ],
    [
      "a filter that keeps its value",
      "{{ scope | safe }}",
      "scope | safe",
      "mapping",
      ["`(scope | safe).readable`"],
    ],
  ])("%s: %s", (_what, source, variable, valueType, hints) => {
    const error = failure(`intro\n${source}`);
    expect(error).toMatchObject({ variable, valueType, template: "main", line: 2 });
    expect(error.message).toContain(`cannot print '${variable}' (a ${valueType})`);
    expect(error.message).toContain("in main, line 2");
    for (const hint of hints) expect(error.hint).toContain(hint);
  });

  it("a {% set %} alias is named as written, at the line it is printed", () => {
    const error = failure("{% set s = scope %}\n\n{{ s }}");
    expect(error).toMatchObject({ variable: "s", line: 3 });
    expect(error.hint).toContain("`s.summary`");
  });

  it("a macro argument is named as the macro's parameter, in the template that defines the macro", () => {
    const lib = link("$podkit/lib.md", "{% macro show(items) %}\n- {{ items }}{% endmacro %}");
    const main = link("main", '{% import "$podkit/lib" as lib %}{{ lib.show(tools) }}', {
      "$podkit/lib": lib,
    });
    expect(printFailure(main)).toMatchObject({
      variable: "items",
      valueType: "list",
      template: "$podkit/lib.md",
      line: 2,
    });
  });

  it("an included template is named as the template", () => {
    const part = link("$workspace/part.md", "ok\n\n{{ files }}");
    const main = link("main", 'head\n{% include "$workspace/part" %}', { "$workspace/part": part });
    expect(printFailure(main)).toMatchObject({ variable: "files", template: "$workspace/part.md", line: 3 });
  });

  it("`| string` and the other text filters refuse a mapping the same way (no [object Object])", () => {
    for (const filter of ["string", "upper", "trim", "escape"]) {
      const error = failure(`{{ scope | ${filter} }}`);
      expect(error, filter).toMatchObject({ variable: "scope", valueType: "mapping" });
      expect(error.message, filter).toContain(`cannot print 'scope' (a mapping) with filter '${filter}'`);
      expect(error.hint, filter).toContain("`scope.summary`");
    }
    expect(failure("{{ tools | string }}")).toMatchObject({ variable: "tools", valueType: "list" });
  });

  it("`~` refuses a list or mapping on either side and names it", () => {
    expect(failure("{{ 'tools: ' ~ tools }}").message).toContain("cannot print 'tools' (a list) with ~");
    expect(failure("{{ scope ~ '!' }}")).toMatchObject({ variable: "scope" });
  });

  it("an item that is not text is refused inside join and map, without a name", () => {
    const joined = failure("{{ [scope, 'a'] | join(', ') }}");
    expect(joined.variable).toBeUndefined();
    expect(joined.message).toContain("cannot print a mapping with filter 'join'");
    expect(joined.hint).toContain("`.summary`");
    expect(failure("{{ [tools] | map('string') | join }}").message).toContain("a list with filter 'string'");
  });

  it("host objects and loop records are refused too", () => {
    expect(failure("{{ cycler('a', 'b') }}")).toMatchObject({ variable: "cycler(…)", valueType: "object" });
    expect(failure("{% for t in tools %}{{ loop }}{% endfor %}").hint).toContain("`loop.index`");
  });

  it("is a TemplateRenderError, so every caller that handles render errors handles it", () => {
    expect(TemplateRenderError.isInstance(failure("{{ scope }}"))).toBe(true);
  });

  // Positive control: the same templates print silently in stock nunjucks (and did here before).
  it("stock nunjucks prints the same values as [object Object] and a comma list", () => {
    const stock = new nunjucks.Environment(null, { autoescape: false });
    expect(stock.renderString("{{ scope }}|{{ tools }}|{{ scope | string }}", data)).toBe(
      "[object Object]|alpha,beta|[object Object]",
    );
  });
});

describe("values that turn into text still print", () => {
  it("a filter that turns a list or mapping into text makes it printable", () => {
    expect(render('{{ tools | join(",") }}')).toBe("alpha,beta");
    expect(render("{{ tools | length }} {{ scope | length }} {{ tools | first }} {{ tools[-1] }}")).toBe(
      "2 3 alpha beta",
    );
    expect(render("{{ x | tojson }} {{ x | dump }}")).toBe('{"y":{"z":1}} {"y":{"z":1}}');
    expect(render("{{ scope.readable | join(', ') }}; {{ scope.summary }}")).toBe("/r; Readable: /r");
    expect(render("{% for t in tools %}{{ loop.index }}={{ t }} {% endfor %}")).toBe("1=alpha 2=beta ");
  });

  it("strings, numbers, booleans, none, the date and time values and default(…) print as before", () => {
    expect(render("{{ 'a' }} {{ 1.5 }} {{ true }} [{{ none }}] {{ ghost | default('d') }}")).toBe(
      "a 1.5 true [] d",
    );
    expect(render("{{ date }} {{ time }} {{ datetime }} {{ files.agents_md }}")).toBe(
      "2026-04-15 09:30:00 2026-04-15T09:30:00Z be kind",
    );
    expect(render("{{ 'n=' ~ (tools | length) }} {{ 1 | string }}")).toBe("n=2 1");
  });
});
