import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

// The CLI's own errors follow the scheme of docs/errors.md: a marker per class, never the name.
const samples: Record<string, () => api.PodkitCliError> = {
  PodkitCliError: () => new api.PodkitCliError("no manifest", { hint: "run podkit init" }),
  UsageError: () => new api.UsageError("bad flag", { hint: "see --help" }),
};

const classes = Object.entries(api).filter(
  (entry): entry is [string, typeof api.PodkitCliError] =>
    typeof entry[1] === "function" && (entry[1] as { prototype?: unknown }).prototype instanceof Error,
);

describe("cli errors carry per-class markers", () => {
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
        // Another copy of the package: the same markers on an object with another prototype.
        const copy = Object.fromEntries(Object.getOwnPropertySymbols(other).map((s) => [s, true]));
        expect(cls.isInstance(copy), `${name}.isInstance(foreign ${otherName})`).toBe(expected);
        other.name = "Renamed";
        expect(cls.isInstance(other)).toBe(expected);
      }
      const impostor = Object.assign(new Error("impostor"), { name, [Symbol.for("podkit.cli.error")]: true });
      expect(cls.isInstance(impostor)).toBe(name === "PodkitCliError");
    },
  );

  it("a usage error exits with 2, any other with its own code or 1", () => {
    expect(new api.UsageError("bad flag", { hint: "see --help" }).exitCode).toBe(2);
    expect(new api.PodkitCliError("x").exitCode).toBe(1);
    expect(new api.PodkitCliError("x", { exitCode: 3 }).exitCode).toBe(3);
  });
});
