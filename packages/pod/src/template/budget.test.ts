import { describe, expect, it } from "vitest";
import {
  DEFAULT_RENDER_LIMITS,
  MAX_TEMPLATE_NESTING,
  MAX_TEMPLATE_SOURCE,
  type RenderLimits,
} from "./budget.js";
import { linkStandalone, TemplateEnvironment } from "./environment.js";
import { TemplateLimitError, TemplateRenderError, TemplateSyntaxError } from "./errors.js";

function render(source: string, data: Record<string, unknown> = {}, limits?: Partial<RenderLimits>): string {
  const env = new TemplateEnvironment({ limits });
  return env.render(linkStandalone(env.compile("budget test", source)), data).text;
}

function limitFailure(
  source: string,
  data: Record<string, unknown> = {},
  limits?: Partial<RenderLimits>,
): TemplateLimitError {
  try {
    render(source, data, limits);
  } catch (error) {
    expect(TemplateLimitError.isInstance(error), String(error)).toBe(true);
    return error as TemplateLimitError;
  }
  throw new Error(`expected ${source} to exceed a limit`);
}

describe("the render budget", () => {
  it("has generous documented defaults", () => {
    expect(DEFAULT_RENDER_LIMITS).toEqual({
      maxSteps: 5_000_000,
      maxLength: 1_000_000,
      maxOutput: 2_000_000,
      maxProduced: 20_000_000,
      maxDepth: 100,
    });
  });

  it("renders real-sized prompts well within it", () => {
    const agentsMd = "Use pnpm. Run the tests before you commit.\n".repeat(5_000); // ~215 KB
    const tools = Array.from({ length: 200 }, (_, i) => ({
      name: `tool_${i}`,
      description: "does things ".repeat(20),
    }));
    const source = [
      "{% macro describe(t) %}- {{ t.name | upper }}: {{ t.description | trim | truncate(80) }}{% endmacro %}",
      "{% for t in tools | sort(attribute='name') %}{{ describe(t) }}\n{% endfor %}",
      "{{ agents_md | indent(2) }}",
      "{{ tools | map(attribute='name') | join(', ') | wordcount }}",
    ].join("\n");
    const text = render(source, { agents_md: agentsMd, tools });
    expect(text.length).toBeGreaterThan(agentsMd.length);
  });

  it("a limit error is a render error naming the template, line and limit", () => {
    const error = limitFailure("line 1\nline 2\n{{ 'ab' * 600000 }}");
    expect(TemplateRenderError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ template: "budget test", line: 3, limit: "length" });
    expect(error.message).toContain("budget test, line 3");
    expect(error.hint).toContain("docs/prompts.md");
  });

  it("counts loop iterations weighted by the size of the body", () => {
    expect(render("{% for i in range(1000) %}{{ i }}{% endfor %}", {}, { maxSteps: 10_000 })).toHaveLength(
      2890,
    );
    const bigBody = `{% for i in range(1000) %}${"{{ i }}".repeat(20)}{% endfor %}`;
    expect(limitFailure(bigBody, {}, { maxSteps: 10_000 }).limit).toBe("steps");
  });

  it("counts macro calls, includes' work and filter work", () => {
    const macro =
      "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(30) }}";
    expect(limitFailure(macro).limit).toBe("steps");
    const filters = "{% set s = 'x ' * 500000 %}{% for i in range(1000) %}{{ s | wordcount }}{% endfor %}";
    expect(limitFailure(filters).limit).toBe("steps");
  });

  it("caps every string and list an operator, filter or function produces", () => {
    for (const source of [
      "{{ [] * 2000000 }}",
      "{{ '' * 2000000 }}",
      "{% set l = range(600000) | list %}{{ (l + l) | length }}",
      "{% set s = 'x' * 600000 %}{{ s ~ s }}",
      "{% set s = 'a ' * 1000 %}{{ s | replace(' ', s) }}",
      "{{ 'x' | center(2000000) }}",
      "{{ range(1000001) | length }}",
      "{% set s = 'x' * 1000 %}{{ ([s] * 2000) | join }}",
      "{% set s = 'x' * 1000 %}{{ ([s] * 2000) | tojson }}",
      "{{ range(10) | batch(2000000, 0) }}",
    ]) {
      expect(limitFailure(source).limit, source).toBe("length");
    }
  });

  it("sums numbers only, so a sum cannot become a concatenation", () => {
    expect(render("{{ range(5) | sum(start=10) }}")).toBe("20");
    const env = new TemplateEnvironment();
    expect(() => env.render(linkStandalone(env.compile("s", "{{ range(9) | sum(start='x') }}")), {})).toThrow(
      "'start' must be a number",
    );
  });

  it("caps the total a render produces", () => {
    const error = limitFailure("{{ range(100) | map('center', 900000) | map('length') | sum }}");
    expect(error.limit).toBe("produced");
  });

  it("caps the output, in a loop and in a plain block", () => {
    expect(limitFailure("{% for i in range(100000) %}{{ 'x' * 500 }}{% endfor %}").limit).toBe("output");
    const s = "{% set s = 'x' * 900000 %}";
    expect(limitFailure(`${s}{{ s }}{{ s }}{{ s }}`).limit).toBe("output");
    expect(limitFailure("{{ text }}", { text: "y".repeat(2_000_001) }).limit).toBe("output");
  });

  it("caps nesting: macro calls, and values compared or serialized", () => {
    expect(limitFailure("{% macro r() %}{{ r() }}{% endmacro %}{{ r() }}").limit).toBe("depth");
    const deep = `{% set l = [1] %}{% set m = [1] %}${"{% set l = [l] %}{% set m = [m] %}".repeat(150)}`;
    for (const use of ["{{ l == m }}", "{{ l | tojson }}"]) {
      expect(limitFailure(deep + use).limit, use).toBe("depth");
    }
  });

  it("limits are configurable per environment", () => {
    expect(limitFailure("{{ 'x' * 11 }}", {}, { maxLength: 10 }).limit).toBe("length");
    expect(render("{{ 'ab' * 600000 }}", {}, { maxLength: 2_000_000 })).toHaveLength(1_200_000);
  });
});

describe("the nesting guard of the compiler", () => {
  it(`refuses syntax trees deeper than ${MAX_TEMPLATE_NESTING} levels with a located syntax error`, () => {
    const env = new TemplateEnvironment();
    let error: unknown;
    try {
      env.compile("chain", `a\nb\n{{ 1${" + 1".repeat(MAX_TEMPLATE_NESTING + 10)} }}`);
    } catch (e) {
      error = e;
    }
    expect(TemplateSyntaxError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ template: "chain", line: 3 });
    expect((error as Error).message).toContain(`nests more than ${MAX_TEMPLATE_NESTING} levels deep`);
  });

  it(`refuses template sources over ${MAX_TEMPLATE_SOURCE} characters before parsing them`, () => {
    const env = new TemplateEnvironment();
    let error: unknown;
    try {
      env.compile("huge", "{{ x }}".repeat(MAX_TEMPLATE_SOURCE / 7 + 1));
    } catch (e) {
      error = e;
    }
    expect(TemplateSyntaxError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(`at most ${MAX_TEMPLATE_SOURCE}`);
  });

  it("accepts chains well below the limit", () => {
    expect(render(`{{ 0${" + 1".repeat(150)} }}`)).toBe("150");
  });
});
