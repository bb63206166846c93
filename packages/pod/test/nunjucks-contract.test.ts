import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { TemplateEngineVersionError } from "../src/template/errors.js";
import {
  type AstNode,
  assertNunjucksVersion,
  NUNJUCKS_VERSION,
  parseTemplateSource,
} from "../src/template/nunjucks-parser.js";

// The template engine uses nunjucks' private lexer, parser and node classes (issue 11). This
// pins what it relies on, so an accidental upgrade of nunjucks fails here, loudly.
const require = createRequire(import.meta.url);
const nodes = require("nunjucks/src/nodes") as Record<string, { prototype: { fields?: string[] } }>;

/** Every node type the compiler reads, with the fields it reads (nunjucks 3.2.4). */
const PINNED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Root: ["children"],
  NodeList: ["children"],
  Literal: ["value"],
  Symbol: ["value"],
  Group: ["children"],
  Array: ["children"],
  Pair: ["key", "value"],
  Dict: ["children"],
  Output: ["children"],
  Capture: ["body"],
  TemplateData: ["value"],
  If: ["cond", "body", "else_"],
  InlineIf: ["cond", "body", "else_"],
  For: ["arr", "name", "body", "else_"],
  Macro: ["name", "args", "body"],
  Caller: ["name", "args", "body"],
  Import: ["template", "target", "withContext"],
  FromImport: ["template", "names", "withContext"],
  FunCall: ["name", "args"],
  Filter: ["name", "args"],
  KeywordArgs: ["children"],
  Include: ["template", "ignoreMissing"],
  Set: ["targets", "value"],
  Switch: ["expr", "cases", "default"],
  Case: ["cond", "body"],
  LookupVal: ["target", "val"],
  In: ["left", "right"],
  Is: ["left", "right"],
  Or: ["left", "right"],
  And: ["left", "right"],
  Not: ["target"],
  Add: ["left", "right"],
  Concat: ["left", "right"],
  Sub: ["left", "right"],
  Mul: ["left", "right"],
  Div: ["left", "right"],
  FloorDiv: ["left", "right"],
  Mod: ["left", "right"],
  Pow: ["left", "right"],
  Neg: ["target"],
  Pos: ["target"],
  Compare: ["expr", "ops"],
  CompareOperand: ["expr", "type"],
};

/** The node types the compiler refuses by name (they must still be recognisable). */
const REFUSED = ["Extends", "Block", "Super", "IfAsync", "AsyncEach", "AsyncAll", "CallExtension"];

/** The last expression (or statement) of a parsed template. */
function only(root: AstNode): AstNode {
  const last = (root.children as AstNode[]).at(-1) as AstNode;
  return last.typename === "Output" ? ((last.children as AstNode[]).at(-1) as AstNode) : last;
}

describe("the nunjucks version the template engine stands on", () => {
  it(`is exactly ${NUNJUCKS_VERSION}, installed`, () => {
    const installed = (require("nunjucks/package.json") as { version: string }).version;
    expect(installed).toBe(NUNJUCKS_VERSION);
    expect(() => assertNunjucksVersion(installed)).not.toThrow();
  });

  it.each(["3.2.5", "3.3.0", "4.0.0", "3.2.3"])("any other version (%s) is a clear, typed error", (found) => {
    let error: unknown;
    try {
      assertNunjucksVersion(found);
    } catch (e) {
      error = e;
    }
    expect(TemplateEngineVersionError.isInstance(error)).toBe(true);
    const e = error as TemplateEngineVersionError;
    expect(e.message).toContain(`needs nunjucks ${NUNJUCKS_VERSION} exactly`);
    expect(e.message).toContain(`nunjucks ${found} is installed`);
    expect(e.hint).toContain(`Install nunjucks ${NUNJUCKS_VERSION}`);
  });
});

describe("the AST node shapes the compiler relies on", () => {
  it.each(Object.entries(PINNED_FIELDS))("%s has fields %j", (typename, fields) => {
    expect(nodes[typename]?.prototype.fields).toEqual(fields);
  });

  it.each(REFUSED)("%s still exists (refused by name)", (typename) => {
    expect(nodes[typename]).toBeDefined();
  });

  it("parses positions as 0-based lineno/colno", () => {
    const node = only(parseTemplateSource("\n  {{ name }}"));
    expect(node).toMatchObject({ typename: "Symbol", value: "name", lineno: 1, colno: 5 });
  });

  it("keeps a block set's body in an undeclared `body` Capture", () => {
    const set = (parseTemplateSource("{% set x %}a{% endset %}").children as AstNode[])[0] as AstNode;
    expect(set.typename).toBe("Set");
    expect(set.value).toBeNull();
    expect((set.body as AstNode).typename).toBe("Capture");
  });

  it("puts keyword arguments last as KeywordArgs of Pairs, and the filtered value first", () => {
    const call = only(parseTemplateSource("{{ f(1, a=2) }}"));
    const args = (call.args as AstNode).children as AstNode[];
    expect(args.map((a) => a.typename)).toEqual(["Literal", "KeywordArgs"]);
    expect(((args[1] as AstNode).children as AstNode[])[0]?.typename).toBe("Pair");
    const filter = only(parseTemplateSource("{{ x | f(2) }}"));
    expect(((filter.args as AstNode).children as AstNode[]).map((a) => a.typename)).toEqual([
      "Symbol",
      "Literal",
    ]);
  });

  it("marks include, import and comparison details as the compiler reads them", () => {
    const [include, imported] = parseTemplateSource(
      '{% include "a" ignore missing %}{% import "b" as m with context %}',
    ).children as AstNode[];
    expect(include).toMatchObject({ typename: "Include", ignoreMissing: true });
    expect(imported).toMatchObject({ typename: "Import", withContext: true });
    const compare = only(parseTemplateSource("{{ 1 < 2 == 3 }}"));
    expect((compare.ops as AstNode[]).map((op) => [op.typename, op.type])).toEqual([
      ["CompareOperand", "<"],
      ["CompareOperand", "=="],
    ]);
  });

  it("passes a call block's body as a Caller keyword argument", () => {
    const call = only(parseTemplateSource("{% call m() %}body{% endcall %}"));
    const keywords = ((call.args as AstNode).children as AstNode[]).at(-1) as AstNode;
    const pair = (keywords.children as AstNode[])[0] as AstNode;
    expect((pair.key as AstNode).value).toBe("caller");
    expect((pair.value as AstNode).typename).toBe("Caller");
  });
});
