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

/** The first words of the reviewer child's system prompt (.podkit/reviewer.toml). */
export const REVIEWER_PROMPT = "You review changes to this project";

/**
 * A review by a read-only child: the pod spawns the `reviewer` role, the child reads the change
 * and its test with its read tools and answers, and the pod reports the answer. In request order.
 */
export const REVIEW: ScriptedResponse[] = [
  {
    parts: [
      {
        type: "tool_call",
        name: "spawn_pod",
        arguments: {
          role: "reviewer",
          task: "Review the change to ticketNumber in src/tickets.js (it now throws a RangeError for ids that are not TCK-<number>) and the new test in test/tickets.test.js.",
        },
      },
    ],
    usage: usage(3_650, 70, 3_600),
  },
  {
    parts: [
      { type: "tool_call", name: "read_file", arguments: { path: "src/tickets.js" } },
      { type: "tool_call", name: "read_file", arguments: { path: "test/tickets.test.js" } },
    ],
    usage: usage(1_500, 40),
  },
  {
    parts: [
      {
        type: "text",
        text: "Sound. The check rejects anything but TCK-<digits> before parsing, and the new test covers a foreign prefix. Nit: a test for `TCK-` with no number would pin the empty case too.",
        chunkSize: 9,
      },
    ],
    usage: usage(2_100, 60, 1_500),
  },
  {
    parts: [
      {
        type: "text",
        text: "The reviewer read the change and its test and found it sound; its one nit is a test for `TCK-` without a number, which I can add if you like.",
        chunkSize: 9,
      },
    ],
    usage: usage(3_800, 50, 3_650),
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

/** `pod.compact()`: the compaction request writes its summary, then finishes. */
export const COMPACT: ScriptedResponse[] = [
  {
    parts: [
      {
        type: "tool_call",
        name: "write_summary",
        arguments: {
          summary:
            "The user asked for an overview of the tickets project and a fix of its one TODO. `ticketNumber` in `src/tickets.js` now throws a RangeError for ids that are not `TCK-<number>`; a test in `test/tickets.test.js` covers it; `node --test test/` passed (3 tests) and CI build 381 on main was green. A 20-second benchmark was started and interrupted by the user; no timing was recorded.",
        },
      },
    ],
    usage: usage(5_200, 180),
  },
  { parts: [{ type: "text", text: "Summary written." }], usage: usage(5_500, 5, 5_200) },
];

/**
 * Memory's final pass when the compacted pod closes: the old segment's slice, what this session is
 * worth remembering, as schema data only (the new segment holds nothing new yet).
 */
export const EXTRACT_AT_CLOSE: ScriptedResponse[] = [
  {
    parts: [
      {
        type: "tool_call",
        name: "write_extracted",
        arguments: {
          decisions: [
            {
              topic: "ticket id validation",
              decision: "ticketNumber rejects ids that are not TCK-<number> with a RangeError",
              reason: "returning NaN let malformed ids sort silently to the wrong place",
            },
          ],
          discussions: [],
          attempts: [
            {
              topic: "benchmark run",
              tried: "a 20-second benchmark",
              observed: "interrupted by the user; no result",
            },
          ],
          requests: [
            {
              topic: "test after changes",
              request: "run the tests after changing code and report the result",
            },
          ],
        },
      },
    ],
    usage: usage(1_400, 160),
  },
  { parts: [{ type: "text", text: "Recorded." }], usage: usage(1_600, 3, 1_400) },
];

/** Memory's final pass when the restored pod closes: the restored turn, nothing new worth remembering. */
export const EXTRACT_AFTER_RESTORE: ScriptedResponse[] = [
  {
    parts: [
      {
        type: "tool_call",
        name: "write_extracted",
        arguments: { decisions: [], discussions: [], attempts: [], requests: [] },
      },
    ],
    usage: usage(600, 40),
  },
  { parts: [{ type: "text", text: "Recorded." }], usage: usage(700, 3, 600) },
];

const NOW = "2026-01-01T00:00:00Z";
const recordText = (frontmatter: string, body: string) => `---\n${frontmatter}\n---\n\n${body}\n`;

/** `runMemoryConsolidation`: one decision, one standing request and the resident summary. */
export const CONSOLIDATE: ScriptedResponse[] = [
  {
    parts: [
      {
        type: "tool_call",
        name: "memory_write",
        arguments: {
          kind: "decision",
          slug: "ticket-id-validation",
          content: recordText(
            `created_at: ${NOW}\nupdated_at: ${NOW}\nstatus: resolved\nsources: []`,
            "`ticketNumber` throws a `RangeError` for ids that are not `TCK-<number>`.\n\nWhy: returning `NaN` let malformed ids sort silently to the wrong place.",
          ),
          reason: "settled in the session: the fix and its test landed",
          staged: ["s1-d1"],
        },
      },
      {
        type: "tool_call",
        name: "memory_write",
        arguments: {
          kind: "request",
          slug: "test-after-changes",
          content: recordText(
            `created_at: ${NOW}\nupdated_at: ${NOW}\nsources: []`,
            "After changing code, run `node --test test/` and report the result seen.",
          ),
          reason: "a standing preference of the user (also in the house style)",
          staged: ["s1-r1"],
        },
      },
      {
        type: "tool_call",
        name: "memory_write",
        arguments: {
          kind: "summary",
          slug: "summary",
          content: recordText(
            `updated_at: ${NOW}`,
            "Tickets project: ids are validated (#ticket-id-validation); tests run after every change (#test-after-changes). Benchmarks have not produced a timing yet.",
          ),
          reason: "first summary of this workspace",
        },
      },
    ],
    usage: usage(3_100, 420),
  },
  { parts: [{ type: "text", text: "Memory is up to date." }], usage: usage(3_700, 6, 3_100) },
  // The tidy step, in the same conversation: nothing to tidy in a first consolidation.
  { parts: [{ type: "text", text: "Nothing to tidy." }], usage: usage(3_800, 5, 3_700) },
];
