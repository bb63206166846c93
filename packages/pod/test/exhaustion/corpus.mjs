// Resource-exhaustion templates (issue 10): each one, without the render budget, takes unbounded
// time or memory or overflows the stack. `kind` is the error each must end in: "limit" (a
// TemplateLimitError while rendering) or "syntax" (a TemplateSyntaxError while compiling).
// `WORKSPACE_FILES` are present in every placement.

const doubling = (statement, times) => Array.from({ length: times }, () => statement).join("");
const chain = (first, term, count) => `{{ ${first}${term.repeat(count)} }}`;

/** @type {readonly { name: string; kind: "limit" | "syntax"; source: string }[]} */
export const CORPUS = [
  // Sizes: every string and list an operation or filter produces is capped.
  {
    name: "an empty list repeated a billion times",
    kind: "limit",
    source: "{{ ([] * 1000000000) | length }}",
  },
  {
    name: "an empty string repeated a billion times",
    kind: "limit",
    source: "{{ ('' * 1000000000) | length }}",
  },
  {
    name: "list + doubling",
    kind: "limit",
    source: `{% set l = [1] %}${doubling("{% set l = l + l %}", 40)}{{ l | length }}`,
  },
  {
    name: "string ~ doubling",
    kind: "limit",
    source: `{% set s = 'ab' %}${doubling("{% set s = s ~ s %}", 40)}{{ s }}`,
  },
  {
    name: "replace blowing a string up",
    kind: "limit",
    source: "{% set s = 'a ' * 400000 %}{{ s | replace(' ', s) | length }}",
  },
  {
    name: "title and wordcount over and over in a loop",
    kind: "limit",
    source:
      "{% set s = 'ab cd ' * 150000 %}{% for i in range(1000000) %}{{ s | title | wordcount }}{% endfor %}",
  },
  {
    name: "a list of a million references to one long string, joined",
    kind: "limit",
    source: "{% set s = 'x' * 1000000 %}{{ ([s] * 1000000) | join('') | length }}",
  },
  {
    name: "a list of a million references to one long string, serialized",
    kind: "limit",
    source: "{% set s = 'x' * 1000000 %}{{ ([s] * 1000000) | tojson }}",
  },
  {
    name: "a list of shared sub-lists serialized to JSON",
    kind: "limit",
    source: `{% set l = [1] %}${doubling("{% set l = [l, l] %}", 60)}{{ l | tojson | length }}`,
  },
  {
    name: "two lists of shared sub-lists compared",
    kind: "limit",
    source: `{% set a = [1] %}{% set b = [1] %}${doubling("{% set a = [a, a] %}{% set b = [b, b] %}", 60)}{{ a == b }}`,
  },
  {
    name: "a list nested a thousand levels deep, serialized",
    kind: "limit",
    source: `{% set l = [1] %}${doubling("{% set l = l | batch(1) %}", 1000)}{{ l | tojson }}`,
  },
  {
    name: "centering into a million characters a thousand times",
    kind: "limit",
    source: "{{ range(1000) | map('center', 1000000) | map('length') | sum }}",
  },
  {
    name: "batch padding rows to a million items",
    kind: "limit",
    source: "{{ range(1000) | batch(1000000, 'x') | length }}",
  },
  {
    name: "indent by a million spaces per line",
    kind: "limit",
    source: "{{ ('a\\n' * 100000) | indent(1000000) | length }}",
  },
  // Work: loop iterations, macro calls, includes and filter work all count.
  {
    name: "exponential macro recursion",
    kind: "limit",
    source: "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}",
  },
  {
    name: "an include that includes itself twice",
    kind: "limit",
    source: '{% include "$workspace/twice" %}',
  },
  {
    name: "filter work inside a loop",
    kind: "limit",
    source: "{% set s = 'ab ' * 300000 %}{% for i in range(1000000) %}{{ s | upper | length }}{% endfor %}",
  },
  {
    name: "sorting a million items in a loop",
    kind: "limit",
    source: "{% for i in range(1000) %}{{ range(1000000) | sort | length }}{% endfor %}",
  },
  {
    name: "nested empty loops",
    kind: "limit",
    source: "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
  },
  {
    name: "comparing two long equal strings in a loop",
    kind: "limit",
    source:
      "{% set a = 'x' * 1000000 %}{% set b = ('x' * 999999) ~ 'x' %}{% for i in range(1000000) %}{{ a == b }}{% endfor %}",
  },
  {
    name: "testing a million references to a long string",
    kind: "limit",
    source: "{% set s = 'x' * 1000000 %}{{ ([s] * 1000000) | select('lower') | list | length }}",
  },
  {
    name: "unique over a million references to a long string",
    kind: "limit",
    source: "{% set s = 'X' * 1000000 %}{{ ([s] * 1000000) | unique | length }}",
  },
  {
    name: "a long numeric key looked up in a loop",
    kind: "limit",
    source:
      "{% set k = '1' * 1000000 %}{% set l = [1] %}{% for i in range(1000000) %}{{ l[k] is defined }}{% endfor %}",
  },
  {
    name: "trim with a long argument in a loop",
    kind: "limit",
    source: "{% set c = 'x' * 1000000 %}{% for i in range(1000000) %}{{ 'a' | trim(c) }}{% endfor %}",
  },
  // Output: the rendered text is capped.
  {
    name: "a million iterations of 500-byte strings",
    kind: "limit",
    source: "{% for i in range(1000000) %}{{ 'x' * 500 }}{% endfor %}",
  },
  // Compile: chains of thousands of terms and deep brackets are refused, not a stack overflow.
  { name: "a chain of 5000 ~ terms", kind: "syntax", source: chain("'a'", " ~ 'a'", 5000) },
  { name: "a chain of 5000 + terms", kind: "syntax", source: chain("1", " + 1", 5000) },
  { name: "a chain of 5000 and terms", kind: "syntax", source: chain("1", " and 1", 5000) },
  { name: "a chain of 5000 trim filters", kind: "syntax", source: chain("'a'", "|trim", 5000) },
  { name: "a chain of 5000 batch filters", kind: "syntax", source: chain("[1]", "|batch(1)", 5000) },
  {
    name: "a chain of 5000 + terms in a set block",
    kind: "syntax",
    source: `{% set x %}${chain("1", " + 1", 5000)}{% endset %}{{ x }}`,
  },
  {
    name: "5000 nested parentheses",
    kind: "syntax",
    source: `{{ ${"(".repeat(5000)}1${")".repeat(5000)} }}`,
  },
  {
    name: "5000 nested if blocks",
    kind: "syntax",
    source: `${"{% if 1 %}".repeat(5000)}x${"{% endif %}".repeat(5000)}`,
  },
  { name: "5000 nested lists", kind: "syntax", source: `{{ ${"[".repeat(5000)}1${"]".repeat(5000)} }}` },
];

/** Where a template can come from: the system prompt, a workspace pack value, an included file. */
export const PLACEMENTS = ["system prompt", "pack value", "included file"];

/** Files of the workspace every case renders in: two that include themselves twice per level. */
export const WORKSPACE_FILES = {
  ".podkit/prompts/twice.md": '{% include "$workspace/twice" %}{% include "$workspace/twice" %}',
  ".podkit/prompts/twice-counted.md":
    '{% set level = level + 1 %}{% if level < 50 %}{% include "$workspace/twice-counted" %}{% include "$workspace/twice-counted" %}{% endif %}',
};
