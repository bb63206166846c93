import { describe, expect, it } from "vitest";

type ErrorClass = (abstract new (...args: never[]) => Error) & { isInstance(value: unknown): boolean };

/** One way to get an instance of each exported error class, by class name. */
export type ErrorSamples = Record<string, () => Error | Promise<Error>>;

/**
 * The kinds of docs/errors.md ("Kinds"): a copy of `ERROR_KINDS` of @podkit/llm-worker, held to
 * it and to the other packages' copies by `packages/cli/test/error-kinds.test.ts`.
 */
export const ERROR_KINDS = [
  "usage",
  "not_found",
  "conflict",
  "corrupt",
  "transient",
  "unsupported",
  "internal",
] as const;

/** One of `ERROR_KINDS`. */
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** A copy of `error` as a second copy of the package would make it: same markers, other prototype. */
function foreignCopy(error: Error): Record<string | symbol, unknown> {
  const copy: Record<string | symbol, unknown> = { message: error.message };
  for (const symbol of Object.getOwnPropertySymbols(error)) copy[symbol] = (error as never)[symbol];
  return copy;
}

/**
 * The marker test of docs/errors.md for one package: every error class `api` exports has a sample;
 * each `isInstance` accepts exactly its own class and subclasses, also from another copy of the
 * package and under another `name`, and never a look-alike that only copies the name; each class
 * has a `Symbol.for("podkit.<pkg>.error…")` marker of its own; each sample carries the `errorKind`
 * `kinds` names for its class, one of the vocabulary.
 */
export function describeErrorScheme(
  pkg: string,
  api: Record<string, unknown>,
  samples: ErrorSamples,
  kinds: Record<string, ErrorKind>,
): void {
  const classes = Object.entries(api).filter(
    (entry): entry is [string, ErrorClass] =>
      typeof entry[1] === "function" && (entry[1] as { prototype?: unknown }).prototype instanceof Error,
  );
  const made = async () =>
    Promise.all(Object.entries(samples).map(async ([name, make]) => [name, await make()] as const));
  const base = `podkit.${pkg}.error`;

  describe(`the error scheme of @podkit/${pkg}`, () => {
    it("has a sample for every exported error class, each an instance of its class", async () => {
      expect(classes.map(([name]) => name).sort()).toEqual(Object.keys(samples).sort());
      for (const [name, error] of await made()) {
        expect((api[name] as ErrorClass).isInstance(error), name).toBe(true);
      }
    });

    it("gives every class the kind it is pinned to, one of the vocabulary", async () => {
      expect(Object.keys(kinds).sort()).toEqual(Object.keys(samples).sort());
      for (const [name, error] of await made()) {
        const kind = (error as { errorKind?: unknown }).errorKind;
        expect(ERROR_KINDS, name).toContain(kind);
        expect(kind, name).toBe(kinds[name]);
      }
    });

    it.each(classes)(
      "%s.isInstance recognises exactly its own class and subclasses, by marker",
      async (name, cls) => {
        for (const [otherName, other] of await made()) {
          const expected = other instanceof cls;
          expect(cls.isInstance(other), `${name}.isInstance(${otherName})`).toBe(expected);
          const foreign = foreignCopy(other);
          expect(cls.isInstance(foreign), `${name}.isInstance(foreign ${otherName})`).toBe(expected);
          foreign.name = "SomethingElse";
          expect(cls.isInstance(foreign), `${name}.isInstance(renamed ${otherName})`).toBe(expected);
        }
        const impostor = Object.assign(new Error("impostor"), { name, [Symbol.for(base)]: true });
        expect(cls.isInstance(impostor)).toBe(Object.getPrototypeOf(cls) === Error);
      },
    );

    it("gives every class its own Symbol.for marker", async () => {
      const instances = await made();
      const markers = classes.map(([name, cls]) => {
        const parent = Object.getPrototypeOf(cls);
        const inherited = new Set(
          instances
            .filter(([, error]) => error.constructor === parent)
            .flatMap(([, error]) => Object.getOwnPropertySymbols(error)),
        );
        const own = instances
          .filter(([sample]) => sample === name)
          .flatMap(([, error]) => Object.getOwnPropertySymbols(error))
          .filter((symbol) => !inherited.has(symbol));
        expect(own, name).toHaveLength(1);
        return own[0]?.description;
      });
      expect(new Set(markers).size).toBe(classes.length);
      for (const marker of markers) expect(marker?.startsWith(base), marker).toBe(true);
      for (const marker of markers) expect(marker).toMatch(/^podkit\.[a-z-]+\.error(\.[a-z-]+)?$/);
    });
  });
}
