import type { ScriptedResponse, ScriptedUsage } from "@podkit/testkit";

// What the scripted model answers, request by request, in the order the demo makes them. The
// tool calls are real calls: the builtin tools and bash run them on the scratch workspace.

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0): ScriptedUsage => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
});

/** Turn 1: look around — grep for TODOs, read the file, explain. */
export const EXPLORE: ScriptedResponse[] = [
  {
    parts: [
      {
        type: "reasoning",
        text: "The user wants an overview. AGENTS.md says code is in src/; I'll grep for TODOs first.",
        signature: "demo-sig-1",
        chunkSize: 12,
      },
      { type: "tool_call", name: "grep", arguments: { pattern: "TODO", path: "src" } },
    ],
    usage: usage(2_400, 60),
  },
  {
    parts: [{ type: "tool_call", name: "read_file", arguments: { path: "src/tickets.js" } }],
    usage: usage(2_650, 30, 2_400),
  },
  {
    parts: [
      {
        type: "text",
        text: "This is a small ticket tracker: `src/tickets.js` parses ids like `TCK-42` and sorts tickets by number. There is one TODO: `ticketNumber` returns `NaN` for ids that do not start with `TCK-` instead of rejecting them.",
        chunkSize: 9,
      },
    ],
    usage: usage(2_900, 70, 2_650),
  },
];

/** Turn 2: fix the TODO with edit_file, add a test, run the tests with bash. */
export const FIX: ScriptedResponse[] = [
  {
    parts: [
      {
        type: "tool_call",
        name: "edit_file",
        arguments: {
          path: "src/tickets.js",
          old_string:
            '  // TODO: reject ids that do not start with "TCK-" instead of returning NaN\n  return Number(id.slice(4));',
          new_string:
            "  if (!/^TCK-\\d+$/.test(id)) throw new RangeError('not a ticket id: ' + id);\n  return Number(id.slice(4));",
        },
      },
    ],
    usage: usage(3_100, 120, 2_900),
  },
  {
    parts: [
      {
        type: "tool_call",
        name: "edit_file",
        arguments: {
          path: "test/tickets.test.js",
          old_string: 'test("sortTickets orders by number"',
          new_string:
            'test("ticketNumber rejects other ids", () => {\n  assert.throws(() => ticketNumber("BUG-7"), RangeError);\n});\n\ntest("sortTickets orders by number"',
        },
      },
    ],
    usage: usage(3_300, 90, 3_100),
  },
  {
    parts: [
      {
        type: "tool_call",
        name: "bash",
        arguments: { command: "node --test test/ 2>&1 | grep -E '^# (pass|fail)'" },
      },
    ],
    usage: usage(3_450, 40, 3_300),
  },
  {
    parts: [
      {
        type: "text",
        text: "Done: `ticketNumber` now throws a `RangeError` for anything that is not `TCK-<number>`, and a new test covers it. I ran `node --test test/`: 3 passed, 0 failed.",
        chunkSize: 9,
      },
    ],
    usage: usage(3_600, 60, 3_450),
  },
];

/** Turn 3: a CI notification arrived before it; the model takes it into account. */
export const AFTER_NOTIFICATION: ScriptedResponse[] = [
  {
    parts: [
      {
        type: "text",
        text: "The CI notification says build 381 on main is green as well, so the fix holds outside this checkout too. Summary: one bug fixed in `src/tickets.js`, one test added, all tests pass.",
        chunkSize: 9,
      },
    ],
    usage: usage(3_800, 50, 3_600),
  },
];

/** Turn 4: a slow bash call that the user interrupts. */
export const SLOW: ScriptedResponse[] = [
  {
    parts: [{ type: "tool_call", name: "bash", arguments: { command: "sleep 20 && echo benchmark done" } }],
    usage: usage(3_900, 30, 3_800),
  },
];

/** Turn 5: after the interrupt; the model sees the synthetic result and the interrupt note. */
export const RECOVER: ScriptedResponse[] = [
  {
    parts: [
      {
        type: "text",
        text: "Understood — the benchmark was interrupted before it finished, so I have no timing to report. Nothing else was left half-done.",
        chunkSize: 9,
      },
    ],
    usage: usage(4_100, 40, 3_900),
  },
];

/** The turn after the restore: the conversation is all there. */
export const AFTER_RESTORE: ScriptedResponse[] = [
  {
    parts: [
      {
        type: "text",
        text: "We found and fixed the `TCK-` id check in `src/tickets.js`, added a test, saw CI go green, and stopped a slow benchmark. Nothing is pending.",
        chunkSize: 9,
      },
    ],
    usage: usage(1_900, 40),
  },
];
