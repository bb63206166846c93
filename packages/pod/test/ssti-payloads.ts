/**
 * Server-side template injection payloads known to escape stock nunjucks 3.2.4 (or to try a
 * known escape route). `LIST`, `MAP` and `STR` stand for a list, a mapping and a string the
 * template was given; each placement substitutes its own variables.
 *
 * `stock` is what the payload achieves against stock nunjucks with the same data (verified by
 * ssti.test.ts): reading `process.env` (secret), running code (canary), reaching `require`,
 * printing function source, or mutating the context or `Object.prototype`. `null` marks routes
 * that stock nunjucks happens to block but that a naive hardening might open.
 */
export type StockEscape = "secret" | "canary" | "require" | "source" | "mutation" | null;

export interface Payload {
  readonly name: string;
  readonly source: string;
  readonly stock: StockEscape;
}

const PROCESS = '("return process")().env.PODKIT_SSTI_SECRET';
const CANARY = "(\"globalThis.__podkitSsti = 'pwned'\")()";
// process.mainModule.require in a CommonJS main module, process.getBuiltinModule elsewhere (ESM, workers).
const REQUIRE =
  '("const load = process.mainModule ? process.mainModule.require : process.getBuiltinModule;' +
  " return load('crypto').createHash('sha256').update('podkit').digest('hex')\")()";

export const PAYLOADS: readonly Payload[] = [
  {
    name: "string literal constructor chain",
    source: `{{ "".constructor.constructor${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "string variable constructor chain",
    source: `{{ STR.constructor.constructor${PROCESS} }}`,
    stock: "secret",
  },
  { name: "string method constructor", source: `{{ STR.toString.constructor${PROCESS} }}`, stock: "secret" },
  {
    name: "array literal constructor chain",
    source: `{{ [].constructor.constructor${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "list variable constructor chain",
    source: `{{ LIST.constructor.constructor${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "number constructor chain",
    source: `{{ (1).constructor.constructor${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "list length (number) via brackets",
    source: `{{ LIST["length"]["constructor"]["constructor"]${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "mapping literal constructor chain",
    source: `{{ {}.constructor.constructor${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "nested mapping value",
    source: `{{ MAP.summary.constructor.constructor${PROCESS} }}`,
    stock: "secret",
  },
  { name: "range global", source: `{{ range.constructor${PROCESS} }}`, stock: "secret" },
  { name: "cycler method", source: `{{ cycler(1).next.constructor${PROCESS} }}`, stock: "secret" },
  { name: "joiner result", source: `{{ joiner().constructor${PROCESS} }}`, stock: "secret" },
  { name: "bracket lookup", source: `{{ ""["constructor"]["constructor"]${PROCESS} }}`, stock: "secret" },
  {
    name: "concatenated key (~)",
    source: `{{ ""["constr" ~ "uctor"]["constr" ~ "uctor"]${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "concatenated key (+)",
    source: `{{ ""["constr" + "uctor"]["constr" + "uctor"]${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "set alias of the key",
    source: `{% set c = "constructor" %}{{ ""[c][c]${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "set alias of the function",
    source: `{% set k = "construc" ~ "tor" %}{% set f = range[k] %}{{ f${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "loop object",
    source: `{% for x in [1] %}{{ loop.constructor.constructor${PROCESS} }}{% endfor %}`,
    stock: "secret",
  },
  {
    name: "loop object with computed key",
    source: `{% for x in [1] %}{{ loop["constr" ~ "uctor"]["constr" ~ "uctor"]${PROCESS} }}{% endfor %}`,
    stock: "secret",
  },
  {
    name: "caller object",
    source: `{% macro m() %}{{ caller.constructor${PROCESS} }}{% endmacro %}{% call m() %}x{% endcall %}`,
    stock: "secret",
  },
  {
    name: "macro object with computed key",
    source: `{% macro m() %}{% endmacro %}{{ m["constr" ~ "uctor"]${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "filter result",
    source: `{{ (LIST | first).constructor.constructor${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "__proto__ climb",
    source: `{{ "".__proto__.constructor.constructor${PROCESS} }}`,
    stock: "secret",
  },
  {
    name: "default() wrapper",
    source: `{{ ghost | default("".constructor.constructor${PROCESS}) }}`,
    stock: "secret",
  },
  {
    name: "default() around the call",
    source: `{{ ("".constructor.constructor("return process")() | default(0)).env.PODKIT_SSTI_SECRET }}`,
    stock: "secret",
  },
  {
    name: "is defined guard",
    source: `{% if "".constructor is defined %}{{ "".constructor.constructor${PROCESS} }}{% endif %}`,
    stock: "secret",
  },
  {
    name: "Function constructor runs code",
    source: `{{ "".constructor.constructor${CANARY} }}`,
    stock: "canary",
  },
  {
    name: "require (or getBuiltinModule) through process",
    source: `{{ "".constructor.constructor${REQUIRE} }}`,
    stock: "require",
  },
  {
    name: "code injection through a test name",
    source: `{{ 1 is "defined\\")&&(globalThis.__podkitSsti=\\"pwned\\")||(\\"" }}`,
    stock: "canary",
  },
  {
    name: "Object.prototype pollution",
    source: `{{ "".constructor.constructor("Object.prototype.polluted = 'yes'")() }}`,
    stock: "mutation",
  },
  { name: "print a global function", source: "{{ range }}", stock: "source" },
  { name: "concatenate a function", source: '{{ "" ~ cycler }}', stock: "source" },
  { name: "function as join separator", source: "{{ LIST | join(range) }}", stock: "source" },
  {
    name: "function as replace argument",
    source: '{{ "a" | replace("a", "".constructor.constructor) }}',
    stock: "source",
  },
  {
    name: "join with attribute=constructor",
    source: '{{ [LIST] | join(",", "constructor") }}',
    stock: "source",
  },
  {
    name: "sort(attribute=…) on constructor",
    source: '{{ LIST | sort(attribute="constructor.name") | join }}',
    stock: null,
  },
  {
    name: "groupby on constructor",
    source: '{% for g in ["x"] | groupby("constructor") %}{{ g }}{% endfor %}',
    stock: null,
  },
  { name: "sum(attribute=constructor)", source: '{{ [""] | sum(attribute="constructor") }}', stock: null },
  {
    name: "map(attribute=constructor)",
    source: '{{ ["x"] | map(attribute="constructor") | join }}',
    stock: null,
  },
  { name: "array push mutates the context", source: '{{ LIST.push("pwned") }}', stock: "mutation" },
  { name: "array pop mutates the context", source: "{% set _ = LIST.pop() %}", stock: "mutation" },
  { name: "array splice mutates the context", source: "{{ LIST.splice(0, 1) }}", stock: "mutation" },
  { name: "array reverse mutates the context", source: "{{ LIST.reverse() }}", stock: "mutation" },
  { name: "set on a member", source: '{% set MAP.summary = "pwned" %}{{ MAP.summary }}', stock: null },
  {
    name: "__proto__ key in a dict literal",
    source: '{% set d = {"__proto__": {"polluted": "yes"}} %}{{ d.polluted }}',
    stock: null,
  },
];
