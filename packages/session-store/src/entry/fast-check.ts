import type { z } from "zod";

/** A validation that only answers yes or no, allocating nothing. */
export type FastCheck = (value: unknown) => boolean;

// zod builds a full copy of every value it validates (a result object per field, a new object per
// object), which made validation the largest cost of appending and restoring a segment, and most
// of its garbage. The codec only needs a yes: this compiles the entry schema into a predicate
// that allocates nothing. It is sound, not complete: it accepts only what zod accepts, and whatever
// it cannot vouch for (a refinement, a transform, a check it does not know, an object that is not
// plain) it rejects, so the codec asks zod — which then also words the error. zod stays the one
// definition of an entry; a test compares both on every entry kind and thousands of mutations.
//
// The predicate is generated JavaScript, one function per object, array or union schema, with each
// field read by its name (`v["ts"]`). Generic closures that read `value[field.key]` for every field
// of every kind share one property access site, which V8 then treats as megamorphic: that cost an
// append more than the checks themselves. (zod itself compiles its object parsers the same way.)
// Where code generation is disabled (`--disallow-code-generation-from-strings`), zod does it all.

type Def = {
  type: string;
  checks?: { _zod: { def: Record<string, unknown> } }[];
  [key: string]: unknown;
};

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;
const optinOf = (schema: z.ZodType): unknown =>
  (schema as unknown as { _zod: { optin?: unknown } })._zod.optin;

class Unsupported extends Error {}

/**
 * A predicate that is true only for values `schema.safeParse` accepts, or undefined when the
 * schema holds something this compiler does not handle (then use zod for everything).
 */
export function compileFastCheck(schema: z.ZodType): FastCheck | undefined {
  let source: string;
  try {
    source = new CheckSource().program(schema);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
  try {
    return new Function(source)() as FastCheck;
  } catch {
    return undefined; // code generation from strings is disabled
  }
}

/** A JavaScript literal for a value compared with `===`, or Unsupported. */
function literal(value: unknown): string {
  if (typeof value === "string" || typeof value === "boolean" || value === null) return JSON.stringify(value);
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (value === undefined) return "undefined";
  throw new Unsupported();
}

/** The source of a program whose result is the check of one schema. */
class CheckSource {
  private readonly functions: string[] = [];
  /** The function generated for each schema (a schema used in several places is checked by one). */
  private readonly names = new Map<z.ZodType, string>();

  program(schema: z.ZodType): string {
    const root = this.test(schema, "v");
    const functions = this.functions.join("\n");
    return `"use strict";
const OBJECT = Object.prototype;
const getPrototypeOf = Object.getPrototypeOf;
const isArray = Array.isArray;
const isSafeInteger = Number.isSafeInteger;
const isFinite = Number.isFinite;
const ownKeys = Reflect.ownKeys;
function plain(v) {
  if (typeof v !== "object" || v === null) return false;
  const proto = getPrototypeOf(v);
  return proto === OBJECT || proto === null;
}
${functions}
return (v) => ${root};`;
  }

  /** A boolean expression that is true when `x` (a variable) satisfies `schema`. */
  private test(schema: z.ZodType, x: string): string {
    const def = defOf(schema);
    const checks = (def.checks ?? []).map((check) => refinement(check._zod.def, x));
    return [this.base(schema, def, x), ...checks].join(" && ");
  }

  private base(schema: z.ZodType, def: Def, x: string): string {
    switch (def.type) {
      case "string":
        return `typeof ${x} === "string"`;
      case "number":
        if (def.format !== undefined && def.format !== "safeint") throw new Unsupported();
        return def.format === "safeint" ? `isSafeInteger(${x})` : `isFinite(${x})`;
      case "boolean":
        return `typeof ${x} === "boolean"`;
      case "null":
        return `${x} === null`;
      case "unknown":
      case "any":
        return "true";
      case "literal":
        return `(${(def.values as unknown[]).map((value) => `${x} === ${literal(value)}`).join(" || ")})`;
      case "enum": {
        const values = Object.values(def.entries as Record<string, unknown>);
        // Numeric (TypeScript) enums carry reverse mappings zod filters out; leave them to zod.
        if (values.some((value) => typeof value !== "string")) throw new Unsupported();
        return `(${values.map((value) => `${x} === ${literal(value)}`).join(" || ")})`;
      }
      case "optional":
        return `(${x} === undefined || ${this.test(def.innerType as z.ZodType, x)})`;
      case "nullable":
        return `(${x} === null || ${this.test(def.innerType as z.ZodType, x)})`;
      case "array":
      case "record":
      case "object":
      case "union":
        return `${this.function(schema, def)}(${x})`;
      default:
        throw new Unsupported();
    }
  }

  /** The name of the function checking a composite schema, generated on first use. */
  private function(schema: z.ZodType, def: Def): string {
    let name = this.names.get(schema);
    if (name !== undefined) return name;
    name = `check${this.names.size}`;
    this.names.set(schema, name);
    const body =
      def.type === "array"
        ? this.array(def)
        : def.type === "record"
          ? this.record(def)
          : def.type === "object"
            ? this.object(def)
            : this.union(def);
    this.functions.push(`function ${name}(v) {\n${body}\n}`);
    return name;
  }

  private array(def: Def): string {
    // Holes read as undefined, as zod reads them.
    return `if (!isArray(v)) return false;
for (let i = 0; i < v.length; i++) { const x = v[i]; if (!(${this.test(def.element as z.ZodType, "x")})) return false; }
return true;`;
  }

  private record(def: Def): string {
    const keyDef = defOf(def.keyType as z.ZodType);
    if (keyDef.type !== "string" || (keyDef.checks ?? []).length > 0) throw new Unsupported();
    return `if (!plain(v)) return false;
for (const key of ownKeys(v)) { if (typeof key !== "string") return false; const x = v[key]; if (!(${this.test(def.valueType as z.ZodType, "x")})) return false; }
return true;`;
  }

  private object(def: Def): string {
    const shape = def.shape as Record<string, z.ZodType>;
    const lines = ["if (!plain(v)) return false;", "let x;"];
    for (const [key, field] of Object.entries(shape)) {
      const name = JSON.stringify(key);
      lines.push(`x = v[${name}];`);
      // Absent is fine only where zod says so on its own: an `.optional()` field (whose test
      // accepts undefined); any other field must be present, even one that accepts undefined.
      const optional = optinOf(field) === "optional" && defOf(field).type === "optional";
      const absent = optional ? "" : `(x === undefined && !(${name} in v)) || `;
      lines.push(`if (${absent}!(${this.test(field, "x")})) return false;`);
    }
    const catchall = def.catchall === undefined ? undefined : defOf(def.catchall as z.ZodType);
    // No catchall strips unknown keys, `unknown` keeps them: either way they pass. Anything else
    // (strict objects, typed catchalls) is left to zod whenever an extra key is present.
    if (catchall !== undefined && catchall.type !== "unknown" && catchall.type !== "any") {
      const known = Object.keys(shape).map((key) => `case ${JSON.stringify(key)}:`);
      lines.push(
        `for (const key of ownKeys(v)) switch (key) { ${known.join(" ")} break; default: return false; }`,
      );
    }
    lines.push("return true;");
    return lines.join("\n");
  }

  private union(def: Def): string {
    const options = def.options as z.ZodType[];
    const discriminator = def.discriminator as string | undefined;
    if (discriminator === undefined) {
      return `return ${options.map((option) => `(${this.test(option, "v")})`).join(" || ")};`;
    }
    const cases: string[] = [];
    for (const option of options) {
      const field = (defOf(option).shape as Record<string, z.ZodType> | undefined)?.[discriminator];
      const fieldDef = field === undefined ? undefined : defOf(field);
      if (fieldDef?.type !== "literal") throw new Unsupported();
      const tags = (fieldDef.values as unknown[]).map((tag) => `case ${literal(tag)}:`).join(" ");
      cases.push(`${tags} return ${this.test(option, "v")};`);
    }
    return `if (!plain(v)) return false;
switch (v[${JSON.stringify(discriminator)}]) {
${cases.join("\n")}
default: return false;
}`;
  }
}

/** A check attached to a string, number or array schema (`.min(1)`, `.int()`, `.nonnegative()`). */
function refinement(check: Record<string, unknown>, x: string): string {
  // A check's `when` only ever lets zod skip it, so enforcing it regardless stays sound.
  switch (check.check) {
    case "min_length":
      return `${x}.length >= ${literal(check.minimum)}`;
    case "max_length":
      return `${x}.length <= ${literal(check.maximum)}`;
    case "number_format":
      if (check.format !== "safeint") throw new Unsupported();
      return `isSafeInteger(${x})`;
    case "greater_than":
      return `${x} ${check.inclusive ? ">=" : ">"} ${literal(check.value)}`;
    case "less_than":
      return `${x} ${check.inclusive ? "<=" : "<"} ${literal(check.value)}`;
    default:
      throw new Unsupported();
  }
}
