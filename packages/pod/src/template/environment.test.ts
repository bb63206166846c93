import { describe, expect, it } from "vitest";
import { caught } from "../../test/helpers.js";
import { PodUsageError } from "../errors.js";
import { linkStandalone, normalizeTemplateSource, TemplateEnvironment } from "./environment.js";
import { TemplateRenderError, TemplateSyntaxError } from "./errors.js";

const env = new TemplateEnvironment();

function render(source: string, data: Record<string, unknown> = {}): string {
  return env.render(linkStandalone(env.compile("test", source)), data).text;
}

function renderFailure(source: string, data: Record<string, unknown> = {}): TemplateRenderError {
  try {
    render(source, data);
  } catch (error) {
    expect(TemplateRenderError.isInstance(error)).toBe(true);
    return error as TemplateRenderError;
  }
  throw new Error(`expected ${source} to fail`);
}

function syntaxFailure(source: string): TemplateSyntaxError {
  try {
    env.compile("test", source);
  } catch (error) {
    expect(TemplateSyntaxError.isInstance(error)).toBe(true);
    return error as TemplateSyntaxError;
  }
  throw new Error(`expected ${source} not to compile`);
}

describe("source handling", () => {
  it("strips exactly one trailing newline and normalises CRLF", () => {
    expect(normalizeTemplateSource("a\r\nb\r\n\r\n")).toBe("a\nb\n");
    expect(render("x\n\n")).toBe("x\n");
  });

  it("compiles a template once per (name, source) and reuses it", () => {
    const local = new TemplateEnvironment();
    const first = local.compile("a", "{{ x }}");
    expect(local.compile("a", "{{ x }}")).toBe(first);
    local.compile("a", "{{ y }}");
    local.compile("b", "{{ x }}");
    expect(local.compiledCount).toBe(3);
  });

  it("reports syntax errors with line and column, also at the end of input", () => {
    expect(syntaxFailure("ok\n{% if x %}\nno end")).toMatchObject({
      line: 3,
      problem: "expected elif, else, or endif, got end of file",
    });
    expect(syntaxFailure("{{ x | }}")).toMatchObject({ line: 1, column: 8 });
  });
});

describe("Jinja semantics", () => {
  it("uses Jinja truthiness: empty lists and mappings are false", () => {
    expect(render("{% if items %}some{% else %}none{% endif %}", { items: [] })).toBe("none");
    expect(render("{% if m %}some{% else %}none{% endif %}", { m: {} })).toBe("none");
    expect(render("{{ 0 or 'zero' }} {{ 'a' and 'b' }} {{ not '' }}")).toBe("zero b true");
  });

  it("compares chains, membership and arithmetic like Jinja", () => {
    expect(
      render("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ [1, 2] == [1, 2] }} {{ 'b' in 'abc' }} {{ 'k' in m }}", {
        m: { k: 1 },
      }),
    ).toBe("true false true true true");
    expect(
      render(
        "{{ 7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 'ab' * 2 }} {{ ([1] + [2]) | join(',') }} {{ 'x' ~ 1 }}",
      ),
    ).toBe("3 2 1024 abab 1,2 x1");
  });

  it("reports type errors at the operator's line", () => {
    expect(renderFailure("\n{{ 'a' < 1 }}")).toMatchObject({ line: 2 });
    expect(renderFailure("{{ 1 / 0 }}").problem).toBe("division by zero");
    expect(renderFailure("{{ 'a' + 1 }}").problem).toContain("unsupported operand types for +");
  });

  it("iterates mappings by key, and by key and value with two names; unpacks pairs", () => {
    const data = {
      m: { a: 1, b: 2 },
      pairs: [
        ["x", 1],
        ["y", 2],
      ],
    };
    expect(render("{% for k in m %}{{ k }}{% endfor %}", data)).toBe("ab");
    expect(render("{% for k, v in m %}{{ k }}={{ v }};{% endfor %}", data)).toBe("a=1;b=2;");
    expect(render("{% for k, v in pairs %}{{ k }}{{ v }}{% endfor %}", data)).toBe("x1y2");
    expect(renderFailure("{% for a, b in [1] %}{% endfor %}").problem).toContain("cannot unpack");
    expect(render("{% for x in [] %}x{% else %}empty{% endfor %}")).toBe("empty");
  });

  it("supports call blocks with arguments, switch, filter blocks and set blocks", () => {
    const macro = "{% macro each(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}";
    expect(render(`${macro}{% call(x) each([1, 2]) %}<{{ x }}>{% endcall %}`)).toBe("<1><2>");
    expect(render("{% switch 2 %}{% case 1 %}one{% case 2 %}two{% default %}many{% endswitch %}")).toBe(
      "two",
    );
    expect(render("{% filter upper %}shout{% endfilter %}")).toBe("SHOUT");
    expect(render("{% set block %}a{{ 1 + 1 }}{% endset %}[{{ block }}]")).toBe("[a2]");
  });

  it("binds macro arguments like Python and refuses bad calls", () => {
    const m = "{% macro m(a, b=2) %}{{ a }}{{ b }}{% endmacro %}";
    expect(render(`${m}{{ m(1) }} {{ m(b=3, a=4) }}`)).toBe("12 43");
    expect(renderFailure(`${m}{{ m(1, 2, 3) }}`).problem).toContain("takes 2 argument(s)");
    expect(renderFailure(`${m}{{ m(1, c=3) }}`).problem).toContain("no parameter 'c'");
    expect(renderFailure(`${m}{{ m() }}`).variable).toBe("a");
  });

  it("offers range, cycler, joiner and dict", () => {
    expect(render("{{ range(3) | join }} {{ range(1, 7, 2) | join(',') }}")).toBe("012 1,3,5");
    expect(render("{% set sep = joiner(', ') %}{% for x in 'abc' %}{{ sep() }}{{ x }}{% endfor %}")).toBe(
      "a, b, c",
    );
    expect(render("{% set c = cycler('odd', 'even') %}{{ c.next() }} {{ c.next() }} {{ c.current }}")).toBe(
      "odd even even",
    );
    expect(render("{{ dict(a=1).a }}")).toBe("1");
  });
});

describe("filters", () => {
  const people = [
    { name: "Bo", city: "Oslo", age: 30 },
    { name: "Al", city: "Rome", age: 25 },
    { name: "Cy", city: "Oslo", age: 41 },
  ];

  it("take attribute arguments through the sandboxed lookup", () => {
    expect(render("{{ people | sort(attribute='age') | join(', ', attribute='name') }}", { people })).toBe(
      "Al, Bo, Cy",
    );
    expect(render("{{ people | map(attribute='name') | join }}", { people })).toBe("BoAlCy");
    expect(
      render("{{ people | selectattr('age', 'gt', 28) | map(attribute='name') | join }}", { people }),
    ).toBe("BoCy");
    expect(
      render("{% for g in people | groupby('city') %}{{ g.grouper }}:{{ g.list | length }};{% endfor %}", {
        people,
      }),
    ).toBe("Oslo:2;Rome:1;");
    expect(
      render("{{ people | rejectattr('age', 'gt', 28) | map(attribute='name') | join }}", { people }),
    ).toBe("Al");
    expect(render("{{ [0, 1, 2, 3] | select('odd') | join }}|{{ [0, 1, '', 2] | reject | join(',') }}")).toBe(
      "13|0,",
    );
    expect(render("{{ people | sum(attribute='age') }}", { people })).toBe("96");
    expect(renderFailure("{{ people | sort(attribute='constructor') }}", { people }).problem).toContain(
      "'constructor' is undefined",
    );
  });

  it("cover text, lists, mappings and JSON", () => {
    expect(
      render("{{ '  hi  ' | trim | upper }}|{{ 'a b c' | replace(' ', '-', 1) }}|{{ 'x' | center(5) }}|"),
    ).toBe("HI|a-b c|  x  |");
    expect(render("{{ 'line1\nline2' | indent(2) }}")).toBe("line1\n  line2");
    expect(render("{{ 'one two three' | truncate(9) }}")).toBe("one two...");
    expect(render("{{ m | dictsort | first | join('=') }}", { m: { b: 1, a: 2 } })).toBe("a=2");
    expect(render("{{ m | tojson }}", { m: { a: [1, "x", null] } })).toBe('{"a":[1,"x",null]}');
    expect(render("{{ [3, 1, 2] | unique | sort | reverse | join }}")).toBe("321");
    expect(render("{{ '' | default('empty', true) }}")).toBe("empty");
    expect(renderFailure("{{ [] | first }}").problem).toContain("empty");
  });
});

describe("sandbox", () => {
  it("does not mutate, freeze or retain the caller's data", () => {
    const data = { tools: ["b", "a"], nested: { list: [1] } };
    render("{{ tools | sort | join }}{% set tools = [] %}{{ tools | length }}", data);
    expect(data).toEqual({ tools: ["b", "a"], nested: { list: [1] } });
    expect(Object.isFrozen(data.tools)).toBe(false);
  });

  it("refuses data that is not plain with a typed usage error, not a bare TypeError", () => {
    let error: unknown;
    try {
      render("x", { f: () => 1 });
    } catch (e) {
      error = e;
    }
    expect(PodUsageError.isInstance(error)).toBe(true);
    expect(error).not.toBeInstanceOf(TypeError);
    expect(() => render("x", { d: new Date() })).toThrow(/not plain data/);
  });

  it("cannot print or call what it was not given", () => {
    expect(renderFailure("{{ range }}").problem).toContain("cannot print function 'range'");
    expect(renderFailure("{% macro m() %}{% endmacro %}{{ 'x' ~ m }}").problem).toContain(
      "cannot print macro 'm'",
    );
    expect(renderFailure("{{ tools() }}", { tools: [] }).problem).toContain("'tools' is not callable");
    expect(renderFailure("{{ tools.sort() }}", { tools: [] }).variable).toBe("tools.sort");
    expect(renderFailure("{{ range.name }}").problem).toContain("has no attributes");
  });

  it("bounds the work a template can ask for", () => {
    expect(
      renderFailure("{% for i in range(3000) %}{% for j in range(3000) %}{% endfor %}{% endfor %}").problem,
    ).toContain("budget of 5000000 steps");
    expect(renderFailure("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}").problem).toContain(
      "nest deeper than 100 levels",
    );
    expect(renderFailure("{{ range(2000000) | length }}").problem).toContain("at most 1000000");
    expect(renderFailure("{{ 'x' | center(100000000) }}").problem).toContain(
      "center(100000000) would produce",
    );
    expect(renderFailure("{{ 'ab' * 600000 }}").problem).toContain("would produce 1200000");
  });

  it("refuses constructs outside the sandboxed subset at compile time", () => {
    expect(syntaxFailure('{% extends "$podkit/x" %}').problem).toContain("not supported");
    expect(syntaxFailure("{% block b %}{% endblock %}").problem).toContain("not supported");
    expect(syntaxFailure("{% include name %}").problem).toContain("literal template name");
    expect(syntaxFailure("{{ r/x/ }}").problem).toContain("regular expression");
    expect(syntaxFailure("{% set a.b = 1 %}").problem).toContain("only plain names");
    expect(syntaxFailure("{{ x.__proto__ }}").problem).toContain("not accessible");
    expect(syntaxFailure("{{ $x }}").problem).toContain("invalid variable name");
  });

  it("locates an error inside a macro in the template that defines it", async () => {
    const local = new TemplateEnvironment();
    const lib = local.compile("$podkit/lib.md", "{% macro boom() %}\n{{ missing }}{% endmacro %}");
    const main = local.compile("main", '{% import "$podkit/lib" as lib %}\n\n{{ lib.boom() }}');
    const linkedLib = linkStandalone(lib);
    const linkedMain = {
      name: "main",
      file: undefined,
      compiled: main,
      deps: new Map([["$podkit/lib", linkedLib]]),
    };
    const error = await caught(() => local.render(linkedMain, {}));
    expect(error).toMatchObject({ template: "$podkit/lib.md", line: 2, variable: "missing" });
  });

  it("keeps imports without context away from the render's data", () => {
    const local = new TemplateEnvironment();
    const lib = linkStandalone(local.compile("lib", "{% set seen = secret is defined %}"));
    const main = (source: string) => ({
      name: "main",
      file: undefined,
      compiled: local.compile("main", source),
      deps: new Map([["$podkit/lib", lib]]),
    });
    expect(local.render(main('{% import "$podkit/lib" as l %}{{ l.seen }}'), { secret: 1 }).text).toBe(
      "false",
    );
    expect(
      local.render(main('{% import "$podkit/lib" as l with context %}{{ l.seen }}'), { secret: 1 }).text,
    ).toBe("true");
  });
});
