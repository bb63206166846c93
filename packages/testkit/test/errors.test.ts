import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

type ErrorClass = (new (...args: never[]) => Error) & { isInstance(value: unknown): boolean };

/** One instance of every public error class, each made the way the testkit makes it. */
const samples: Record<string, () => Promise<Error>> = {
  TestkitError: async () => new api.TestkitError("base"),
  ScriptError: async () => {
    const double = await api.startProviderDouble({ wire: "anthropic" });
    try {
      double.enqueue({ parts: [{ type: "text", text: "x", chunkSize: 0 }] });
    } catch (error) {
      return error as Error;
    } finally {
      await double.close();
    }
    throw new Error("a chunkSize of 0 was accepted");
  },
  OptionsError: () =>
    api
      .startProviderDouble({ wire: "smoke-signals" as never })
      .then(() => new Error("accepted"))
      .catch((e: Error) => e),
  ListenError: async () => {
    const first = await api.startProviderDouble({ wire: "anthropic" });
    const port = Number(new URL(first.origin).port);
    const error = await api.startProviderDouble({ wire: "anthropic", port }).then(
      async (second) => {
        await second.close();
        return new Error("two doubles listened on one port");
      },
      (e: Error) => e,
    );
    await first.close();
    return error;
  },
  RecordingError: async () => {
    try {
      api.loadRecordedChunks("/nonexistent/recording.chunks.txt");
    } catch (error) {
      return error as Error;
    }
    return new Error("a missing recording was read");
  },
};

const classes = (Object.entries(api) as [string, unknown][]).filter(
  (entry): entry is [string, ErrorClass] =>
    typeof entry[1] === "function" && (entry[1] as { prototype?: unknown }).prototype instanceof Error,
);

function foreignCopy(error: Error): object {
  const copy: Record<string | symbol, unknown> = { message: error.message };
  for (const symbol of Object.getOwnPropertySymbols(error)) copy[symbol] = (error as never)[symbol];
  return copy;
}

describe("the error scheme of @podkit/testkit", () => {
  it("has a sample for every exported error class, each thrown by the testkit itself", async () => {
    expect(classes.map(([name]) => name).sort()).toEqual(Object.keys(samples).sort());
    for (const [name, make] of Object.entries(samples)) {
      const error = await make();
      expect((api as unknown as Record<string, ErrorClass>)[name]?.isInstance(error), name).toBe(true);
    }
  });

  it.each(classes)(
    "%s.isInstance recognises exactly its own class and subclasses, by marker",
    async (name, cls) => {
      for (const [otherName, make] of Object.entries(samples)) {
        const other = await make();
        const expected = other instanceof cls;
        expect(cls.isInstance(other), `${name}.isInstance(${otherName})`).toBe(expected);
        expect(cls.isInstance(foreignCopy(other)), `${name}.isInstance(foreign ${otherName})`).toBe(expected);
        const renamed = Object.assign(foreignCopy(other), { name: "SomethingElse" });
        expect(cls.isInstance(renamed)).toBe(expected);
      }
      const impostor = Object.assign(new Error("impostor"), {
        name,
        [Symbol.for("podkit.testkit.error")]: true,
      });
      expect(cls.isInstance(impostor)).toBe(name === "TestkitError");
    },
  );

  it("answers missing arguments with an OptionsError, never a bare TypeError", async () => {
    const missing = await api.startProviderDouble(undefined as never).catch((e: unknown) => e);
    expect(api.OptionsError.isInstance(missing)).toBe(true);
    expect(() => api.simulatePromptCache(undefined as never, "anthropic")).toThrow(api.OptionsError);
  });
});
