import { describe, expect, it } from "vitest";
import { describeErrorScheme } from "../../../test-support/error-scheme.js";
import * as api from "../src/index.js";

/** One instance of every public error class; a class missing here fails the first test. */
const samples: Record<string, () => api.LlmWorkerError> = {
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
  MediaNotFoundError: () => new api.MediaNotFoundError(`sha256:${"0".repeat(64)}`, "a test store"),
};

describeErrorScheme("llm-worker", api, samples, {
  LlmWorkerError: "usage",
  ProviderError: "transient",
  MalformedResponseError: "usage",
  EmptyResponseError: "usage",
  ToolError: "usage",
  AbortedError: "transient",
  CancelledError: "usage",
  HistoryAppendError: "transient",
  ConfigurationError: "usage",
  WorkerBusyError: "conflict",
  MediaNotFoundError: "not_found",
});

describe("the kind of a failure that depends on it is read off its data", () => {
  const provider = (status: number | undefined, kind: api.ProviderErrorKind, isRetryable: boolean) =>
    new api.ProviderError("failed", { ...(status === undefined ? {} : { status }), kind, isRetryable });

  it("a provider failure that may pass on another try is transient; a refusal is the setup's", () => {
    expect(provider(503, "http", true).errorKind).toBe("transient");
    expect(provider(429, "http", true).errorKind).toBe("transient");
    expect(provider(undefined, "connection", true).errorKind).toBe("transient");
    expect(provider(401, "http", false).errorKind).toBe("usage");
    expect(provider(400, "http", false).errorKind).toBe("usage");
    expect(new api.EmptyResponseError("anthropic", { kind: "error", raw: "error" }).errorKind).toBe(
      "transient",
    );
    expect(new api.EmptyResponseError("anthropic", { kind: "length", raw: "max_tokens" }).errorKind).toBe(
      "usage",
    );
  });

  it("a history append that failed has its cause's kind: a store's busy session, a damaged log", () => {
    const fromStore = (errorKind: string) =>
      Object.assign(new Error("from a store"), {
        [Symbol.for("podkit.session-store.error")]: true,
        errorKind,
      });
    expect(new api.HistoryAppendError("message", fromStore("conflict")).errorKind).toBe("conflict");
    expect(new api.HistoryAppendError("message", fromStore("corrupt")).errorKind).toBe("corrupt");
    // A cause that is not podkit's says nothing, whatever it claims: the append may work later.
    const claims = Object.assign(new Error("disk full"), { errorKind: "corrupt" });
    expect(new api.HistoryAppendError("message", claims).errorKind).toBe("transient");
    expect(new api.HistoryAppendError("message", fromStore("fatal")).errorKind).toBe("transient");
  });

  it("errorKindOf reads the kind of a podkit error of any package, and nothing else's", () => {
    expect(api.errorKindOf(provider(503, "http", true))).toBe("transient");
    expect(
      api.errorKindOf(
        Object.assign(new Error("x"), { [Symbol.for("podkit.pod.error")]: true, errorKind: "conflict" }),
      ),
    ).toBe("conflict");
    expect(api.errorKindOf(Object.assign(new TypeError("x"), { errorKind: "usage" }))).toBeUndefined();
    expect(
      api.errorKindOf(Object.assign(new Error("x"), { [Symbol.for("podkit.pod.error")]: true })),
    ).toBeUndefined();
    expect(api.errorKindOf(undefined)).toBeUndefined();
    expect(api.errorKindOf("usage")).toBeUndefined();
  });
});

describe("the hints llm-worker errors carry for the person who sees them", () => {
  const provider = (status: number | undefined, kind: api.ProviderErrorKind, isRetryable: boolean) =>
    new api.ProviderError("failed", { ...(status === undefined ? {} : { status }), kind, isRetryable });

  it.each([
    [
      "a refused key (401)",
      provider(401, "http", false),
      /refused the API key: check the variable \[model\] api_key_env names/,
    ],
    ["a refused key (403)", provider(403, "http", false), /refused the API key/],
    [
      "an unknown model (404)",
      provider(404, "http", false),
      /does not know this model or endpoint: check \[model\] ref and base_url/,
    ],
    ["no server", provider(undefined, "connection", true), /is the server at \[model\] base_url running\?/],
    ["retries used up", provider(503, "http", true), /failed after the retries; run again later/],
    ["a rejected request", provider(400, "http", false), /rerun with --debug for its full answer/],
    ["an unreadable response", samples.MalformedResponseError?.(), /not retried; check any proxy or gateway/],
    ["an empty response at the output limit", samples.EmptyResponseError?.(), /raise \[worker\] max_tokens/],
    [
      "an empty response with an error",
      new api.EmptyResponseError("anthropic", { kind: "error", raw: "error" }),
      /^run again/,
    ],
    ["a tool that cannot be registered", samples.ToolError?.(), /check \[tools\] and \[\[mcp\.server\]\]/],
    ["bad model configuration", samples.ConfigurationError?.(), /check \[model\] in the manifest/],
    [
      "a media part a store does not hold",
      samples.MediaNotFoundError?.(),
      /give it the store its history's media were stored in/,
    ],
  ])("%s", (_what, error, hint) => {
    expect((error as api.LlmWorkerError).hint).toMatch(hint);
  });

  it("keeps a hint given by the thrower over the class default", () => {
    expect(new api.ConfigurationError("x", { hint: "do this" }).hint).toBe("do this");
    expect(new api.ToolError("x", { hint: "do that" }).hint).toBe("do that");
    expect(
      new api.ProviderError("x", { kind: "http", status: 401, isRetryable: false, hint: "mine" }).hint,
    ).toBe("mine");
  });

  it("has no hint where there is nothing for a person to do", () => {
    for (const name of [
      "LlmWorkerError",
      "AbortedError",
      "CancelledError",
      "HistoryAppendError",
      "WorkerBusyError",
    ]) {
      expect((samples[name] as () => api.LlmWorkerError)().hint, name).toBeUndefined();
    }
  });

  it("tells a missing API key to the person through the adapter's ConfigurationError", () => {
    const error = (() => {
      try {
        api.createModelAdapter("openai/gpt-5", { env: {} });
      } catch (caught) {
        return caught as api.LlmWorkerError;
      }
      throw new Error("no error for a missing key");
    })();
    expect(error.message).toMatch(/OPENAI_API_KEY/);
    expect(error.hint).toMatch(/\[model\]/);
  });
});
