// Session log entries shaped like real turns, shared by the session-store and store-postgres
// benches so both measure the same workload.

/** A realistic turn: invoke, user text, reasoning with a signature, tool call + result, reply, usage. */
function* turnEntries() {
  let turn = 0;
  const signature = "ErUBCkYIBhgCIkD".padEnd(344, "Qx7");
  for (;;) {
    turn++;
    const ts = 1_760_000_000_000 + turn * 1000;
    const id = `toolu_${String(turn).padStart(20, "0")}`;
    yield { kind: "invoke", ts, trigger: "user" };
    yield {
      kind: "user_input",
      ts,
      text: `Please look at src/module-${turn}.ts and fix the failing test — 日本語も少し。`,
    };
    yield {
      kind: "assistant_item",
      ts,
      item: {
        type: "reasoning",
        text: `The user wants a fix in module ${turn}. I should read the file first, then run the test.`,
        provider_metadata: { anthropic: { signature } },
      },
    };
    yield {
      kind: "assistant_item",
      ts,
      item: {
        type: "tool_call",
        call_id: id,
        name: "read_file",
        arguments: `{"path":"src/module-${turn}.ts"}`,
      },
    };
    yield {
      kind: "tool_result",
      ts,
      item: {
        type: "tool_result",
        call_id: id,
        summary: "read 42 lines",
        content: `export function add(a: number, b: number) {\n  return a - b; // ${turn}\n}\n`.repeat(6),
      },
    };
    yield {
      kind: "assistant_item",
      ts,
      item: {
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: "The bug is a `-` that should be `+`. Fixed." }],
      },
    };
    yield {
      kind: "llm_usage",
      ts,
      history_len: turn * 5,
      input_tokens: 1200 * turn,
      cache_read_tokens: 1000 * turn,
      cache_write_tokens: 200,
      output_tokens: 150,
    };
    yield { kind: "turn_end", ts, turn };
    yield { kind: "run_completed", ts, result: "finished", interrupted: false };
  }
}

export function makeEntries(n) {
  const out = [];
  for (const entry of turnEntries()) {
    if (out.length === n) break;
    out.push(entry);
  }
  return out;
}
