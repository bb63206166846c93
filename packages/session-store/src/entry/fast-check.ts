import type { z } from "zod";

/** A validation that only answers yes or no, allocating nothing. */
export type FastCheck = (value: unknown) => boolean;

// zod builds a full copy of every value it validates (a result object per field, a new object per
// object), which made validation the largest cost of appending and restoring a segment, and most
// of its garbage. The codec only needs a yes: this compiles the entry schema into plain predicates
// that allocate nothing. It is sound, not complete: it accepts only what zod accepts, and whatever
// it cannot vouch for (a refinement, a transform, a check it does not know, an object that is not
// plain) it rejects, so the codec asks zod — which then also words the error. zod stays the one
// definition of an entry; a test compares both on every entry kind and thousands of mutations.

type Def = {
  type: string;
  checks?: { _zod: { def: Record<string, unknown> } }[];
  [key: string]: unknown;
};

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;
const optinOf = (schema: z.ZodType): unknown =>
  (schema as unknown as { _zod: { optin?: unknown } })._zod.optin;

const accept: FastCheck = () => true;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A predicate that is true only for values `schema.safeParse` accepts, or undefined when the
 * schema holds something this compiler does not handle (then use zod for everything).
 */
export function compileFastCheck(schema: z.ZodType): FastCheck | undefined {
  try {
    return compile(schema);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

class Unsupported extends Error {}

function compile(schema: z.ZodType): FastCheck {
  const def = defOf(schema);
  const checks = (def.checks ?? []).map((check) => check._zod.def);
  const base = compileType(def);
  if (checks.length === 0) return base;
  const refinements = checks.map(compileRefinement);
  return (value) => {
    if (!base(value)) return false;
    for (const refinement of refinements) if (!refinement(value)) return false;
    return true;
  };
}

/** A check attached to a string or number schema (`.min(1)`, `.int()`, `.nonnegative()`). */
function compileRefinement(check: Record<string, unknown>): FastCheck {
  // A check's `when` only ever lets zod skip it, so enforcing it regardless stays sound.
  switch (check.check) {
    case "min_length": {
      const minimum = check.minimum as number;
      return (value) => (value as string | unknown[]).length >= minimum;
    }
    case "max_length": {
      const maximum = check.maximum as number;
      return (value) => (value as string | unknown[]).length <= maximum;
    }
    case "number_format":
      if (check.format !== "safeint") throw new Unsupported();
      return (value) => Number.isSafeInteger(value);
    case "greater_than": {
      const bound = check.value as number;
      return check.inclusive ? (value) => (value as number) >= bound : (value) => (value as number) > bound;
    }
    case "less_than": {
      const bound = check.value as number;
      return check.inclusive ? (value) => (value as number) <= bound : (value) => (value as number) < bound;
    }
    default:
      throw new Unsupported();
  }
}

function compileType(def: Def): FastCheck {
  switch (def.type) {
    case "string":
      return (value) => typeof value === "string";
    case "number":
      if (def.format !== undefined && def.format !== "safeint") throw new Unsupported();
      return def.format === "safeint"
        ? (value) => Number.isSafeInteger(value)
        : (value) => typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return (value) => typeof value === "boolean";
    case "null":
      return (value) => value === null;
    case "unknown":
    case "any":
      return accept;
    case "literal": {
      const values = def.values as unknown[];
      return (value) => values.includes(value);
    }
    case "enum": {
      const values = Object.values(def.entries as Record<string, unknown>);
      // Numeric (TypeScript) enums carry reverse mappings zod filters out; leave them to zod.
      if (values.some((entry) => typeof entry !== "string")) throw new Unsupported();
      return (value) => values.includes(value);
    }
    case "optional": {
      const inner = compile(def.innerType as z.ZodType);
      return (value) => value === undefined || inner(value);
    }
    case "nullable": {
      const inner = compile(def.innerType as z.ZodType);
      return (value) => value === null || inner(value);
    }
    case "array": {
      const element = compile(def.element as z.ZodType);
      return (value) => Array.isArray(value) && value.every((item) => element(item));
    }
    case "record":
      return compileRecord(def);
    case "object":
      return compileObject(def);
    case "union":
      return compileUnion(def);
    default:
      throw new Unsupported();
  }
}

function compileRecord(def: Def): FastCheck {
  const keyDef = defOf(def.keyType as z.ZodType);
  if (keyDef.type !== "string" || (keyDef.checks ?? []).length > 0) throw new Unsupported();
  const valueCheck = compile(def.valueType as z.ZodType);
  return (value) => {
    if (!isPlainObject(value)) return false;
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key !== "string" || !valueCheck(value[key])) return false;
    }
    return true;
  };
}

function compileObject(def: Def): FastCheck {
  const shape = def.shape as Record<string, z.ZodType>;
  const fields = Object.entries(shape).map(([key, field]) => ({
    key,
    // Absent is fine only where zod says so on its own: an `.optional()` field.
    optional: optinOf(field) === "optional" && defOf(field).type === "optional",
    check: compile(field),
  }));
  const catchall = def.catchall === undefined ? undefined : defOf(def.catchall as z.ZodType);
  // No catchall strips unknown keys, `unknown` keeps them: either way they pass. Anything else
  // (strict objects, typed catchalls) is left to zod whenever an extra key is present.
  const extrasPass = catchall === undefined || catchall.type === "unknown" || catchall.type === "any";
  const known = new Set(Object.keys(shape));
  return (value) => {
    if (!isPlainObject(value)) return false;
    for (const field of fields) {
      if (!(field.key in value)) {
        if (!field.optional) return false;
        continue;
      }
      if (!field.check(value[field.key])) return false;
    }
    if (!extrasPass) for (const key of Reflect.ownKeys(value)) if (!known.has(key as string)) return false;
    return true;
  };
}

function compileUnion(def: Def): FastCheck {
  const options = (def.options as z.ZodType[]).map((option) => ({ option, check: compile(option) }));
  const discriminator = def.discriminator as string | undefined;
  if (discriminator !== undefined) {
    const byTag = new Map<unknown, FastCheck>();
    for (const { option, check } of options) {
      const field = (defOf(option).shape as Record<string, z.ZodType> | undefined)?.[discriminator];
      const fieldDef = field === undefined ? undefined : defOf(field);
      if (fieldDef?.type !== "literal") throw new Unsupported();
      for (const tag of fieldDef.values as unknown[]) byTag.set(tag, check);
    }
    return (value) => {
      if (!isPlainObject(value)) return false;
      return byTag.get(value[discriminator])?.(value) ?? false;
    };
  }
  return (value) => options.some(({ check }) => check(value));
}
