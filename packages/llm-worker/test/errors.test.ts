import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

type ErrorClass = (new (...args: never[]) => Error) & { isInstance(value: unknown): boolean };

/** One instance of every public error class; a class missing here fails the first test. */
const samples: Record<string, () => Error> = {
  LlmWorkerError: () => new api.LlmWorkerError("base"),
  ProviderError: () => new api.ProviderError("http", { kind: "http", status: 500, isRetryable: true }),
  MalformedResponseError: () =>
    new api.MalformedResponseError({ provider: "openai", part: "the field x", detail: "boom" }),
  EmptyResponseError: () => new api.EmptyResponseError("anthropic", { kind: "length", raw: "max_tokens" }),
  ToolError: () => new api.ToolError("dup", { toolName: "grep" }),
  AbortedError: () => new api.AbortedError(),
  CancelledError: () => new api.CancelledError("no"),
  HistoryAppendError: () => new api.HistoryAppendError("message", new Error("disk full")),
  ConfigurationError: () => new api.ConfigurationError("bad ref"),
  WorkerBusyError: () => new api.WorkerBusyError("setConfig"),
};

const classes = (Object.entries(api) as [string, unknown][]).filter(
  (entry): entry is [string, ErrorClass] =>
    typeof entry[1] === "function" && (entry[1] as { prototype?: unknown }).prototype instanceof Error,
);

/** A copy of `error` as a second copy of the package would make it: same markers, other prototype. */
function foreignCopy(error: Error): object {
  const copy: Record<string | symbol, unknown> = { message: error.message };
  for (const symbol of Object.getOwnPropertySymbols(error)) copy[symbol] = (error as never)[symbol];
  return copy;
}

describe("the error scheme of @podkit/llm-worker", () => {
  it("has a sample for every exported error class", () => {
    expect(classes.map(([name]) => name).sort()).toEqual(Object.keys(samples).sort());
  });

  it.each(classes)(
    "%s.isInstance recognises exactly its own class and subclasses, by marker",
    (name, cls) => {
      for (const [otherName, make] of Object.entries(samples)) {
        const other = make();
        const expected = other instanceof cls;
        expect(cls.isInstance(other), `${name}.isInstance(${otherName})`).toBe(expected);
        expect(cls.isInstance(foreignCopy(other)), `${name}.isInstance(foreign ${otherName})`).toBe(expected);
      }
    },
  );

  it.each(classes)("%s is identified by its marker, never by its mutable name", (name, cls) => {
    const renamed = (samples[name] as () => Error)();
    renamed.name = "SomethingElse";
    expect(cls.isInstance(renamed)).toBe(true);
    const impostor = Object.assign(new Error("impostor"), {
      name,
      [Symbol.for("podkit.llm-worker.error")]: true,
    });
    expect(cls.isInstance(impostor)).toBe(name === "LlmWorkerError");
  });

  it("gives every class its own Symbol.for marker", () => {
    const markers = classes.map(([name, cls]) => {
      const parent = Object.getPrototypeOf(cls) as ErrorClass;
      const inherited = new Set(
        Object.entries(samples)
          .map(([, make]) => make())
          .filter((sample) => sample.constructor === parent)
          .flatMap((sample) => Object.getOwnPropertySymbols(sample)),
      );
      const own = Object.getOwnPropertySymbols((samples[name] as () => Error)()).filter(
        (s) => !inherited.has(s),
      );
      expect(own, name).toHaveLength(1);
      return own[0]?.description;
    });
    expect(new Set(markers).size).toBe(classes.length);
    for (const marker of markers) expect(marker).toMatch(/^podkit\.llm-worker\.error(\.[a-z-]+)?$/);
  });
});
