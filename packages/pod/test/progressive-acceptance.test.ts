// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type CapturedRequest,
  mcpServerDoubleCommand,
  type ScriptedPart,
  type ScriptedResponse,
} from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { SKILLS_LOADED_DOMAIN } from "../src/skills/skill-records.js";
import { sessionEntries, text, toolCall, usePodWorlds } from "./pod-harness.js";
import { writeSkill, writeSkills } from "./support/skills.js";

// Issue 43's first acceptance point: progressive disclosure keeps the cached prefix on every
// provider. A session with 60 skills and a 200-tool MCP server (the testkit's double, a child
// process over stdio, `defer = true`) runs 30 turns in which 5 listed skills, one skill added to
// disk mid-session and 12 deferred tools are used, through the real AI SDK adapters on the
// provider double's wires. Every request sends the same tools array and system prompt, byte for
// byte, and each request's prompt only appends to the previous one's.

const world = usePodWorlds();

type Wire = "anthropic" | "openai-responses" | "openai-chat";

const SKILLS = "project/.podkit/skills";
const TURNS = 30;
/** Before this turn (1-based) a new skill is written to disk. */
const ADDED_BEFORE_TURN = 15;
const ADDED_SKILL = {
  name: "release-notes",
  description: "Write release notes from the merged changes.",
  body: "# release-notes\n\nGroup the merged changes by package; RELEASE-NOTES-STEPS.",
};

/** One deferred tool the model uses: its name on the MCP double and valid arguments. */
interface DeferredUse {
  tool: string;
  arguments: Record<string, unknown>;
  query: string;
}

const DEFERRED: readonly DeferredUse[] = [
  { tool: "get_invoice", arguments: { id: "INV-1" }, query: "get invoice" },
  { tool: "update_customer", arguments: { id: "C-9", fields: { tier: "gold" } }, query: "update customer" },
  { tool: "search_ticket", arguments: { query: "login" }, query: "search helpdesk tickets" },
  { tool: "list_repository", arguments: { limit: 5 }, query: "list repositories" },
  { tool: "comment_issue", arguments: { id: "I-3", text: "looks good" }, query: "comment on issue" },
  { tool: "export_order", arguments: { format: "csv" }, query: "export orders" },
  { tool: "assign_task", arguments: { id: "T-2", assignee: "ana" }, query: "assign task" },
  { tool: "archive_document", arguments: { id: "D-1" }, query: "archive document" },
  { tool: "create_meeting", arguments: { title: "retro" }, query: "create meeting" },
  { tool: "get_shipment", arguments: { id: "S-4" }, query: "get shipment" },
  { tool: "search_product", arguments: { query: "lamp" }, query: "search product catalog" },
  { tool: "list_payment", arguments: { limit: 10 }, query: "list payments" },
];
const LISTED_SKILLS = ["skill-03", "skill-17", "skill-29", "skill-42", "skill-58"];

/** What each turn does: answer, load a skill, or use a deferred tool. */
type TurnPlan = { kind: "text" } | { kind: "skill"; name: string } | { kind: "deferred"; use: DeferredUse };

/** The 30 turns: 5 listed skills, the added one (after it was announced), 12 deferred tools, chat between. */
function plan(): TurnPlan[] {
  const turns: TurnPlan[] = Array.from({ length: TURNS }, () => ({ kind: "text" }));
  const skillAt: Record<number, string> = {
    2: "skill-03",
    6: "skill-17",
    10: "skill-29",
    13: "skill-42",
    18: ADDED_SKILL.name,
    20: "skill-58",
  };
  for (const [turn, name] of Object.entries(skillAt)) turns[Number(turn) - 1] = { kind: "skill", name };
  [3, 4, 7, 8, 11, 12, 16, 17, 21, 22, 24, 26].forEach((turn, i) => {
    turns[turn - 1] = { kind: "deferred", use: DEFERRED[i] as DeferredUse };
  });
  return turns;
}

/** The MCP name the model sees for a tool of the double. */
const mcpName = (use: DeferredUse) => `mcp__big__${use.tool}`;

const raw = (data: { type: string } & Record<string, unknown>): ScriptedPart => ({
  type: "raw",
  event: data.type,
  data,
});

/**
 * The provider's own tool search, then the call of the tool it found, in one response: on
 * Anthropic a `server_tool_use` and its `tool_search_tool_result`; on OpenAI Responses a
 * `tool_search_call` and `tool_search_output` item (which the double has no scripted part for:
 * sent as raw events, in the form the AI SDK parses).
 */
function nativeSearchThenCall(wire: "anthropic" | "openai-responses", use: DeferredUse, n: number) {
  const call: ScriptedPart = {
    type: "tool_call",
    id: `call_d${n}`,
    name: mcpName(use),
    arguments: use.arguments,
  };
  if (wire === "anthropic") {
    return {
      parts: [
        {
          type: "server_tool_call",
          id: `srvtoolu_s${n}`,
          name: "tool_search_tool_bm25",
          input: { query: use.query },
        },
        {
          type: "server_tool_result",
          name: "tool_search",
          result: {
            type: "tool_search_tool_search_result",
            tool_references: [{ type: "tool_reference", tool_name: mcpName(use) }],
          },
        },
        call,
      ],
    } satisfies ScriptedResponse;
  }
  const search = { id: `tsc_s${n}`, type: "tool_search_call", execution: "server", call_id: null };
  const found = {
    id: `tso_s${n}`,
    type: "tool_search_output",
    execution: "server",
    call_id: null,
    tools: [{ type: "function", name: mcpName(use), defer_loading: true }],
  };
  return {
    parts: [
      raw({
        type: "response.output_item.added",
        output_index: 0,
        item: { ...search, status: "in_progress", arguments: {} },
      }),
      raw({
        type: "response.output_item.done",
        output_index: 0,
        item: { ...search, status: "completed", arguments: { query: use.query } },
      }),
      raw({ type: "response.output_item.added", output_index: 1, item: { ...found, status: "in_progress" } }),
      raw({ type: "response.output_item.done", output_index: 1, item: { ...found, status: "completed" } }),
      call,
    ],
  } satisfies ScriptedResponse;
}

/** The scripted model's responses for one turn on `wire`. */
function responsesFor(wire: Wire, turn: TurnPlan, n: number): ScriptedResponse[] {
  switch (turn.kind) {
    case "text":
      return [text(`answer ${n}`)];
    case "skill":
      return [toolCall("skill", { name: turn.name }, `call_s${n}`), text(`followed ${turn.name}`)];
    case "deferred":
      if (wire === "openai-chat") {
        return [
          toolCall("find_tools", { query: turn.use.query }, `call_f${n}`),
          toolCall("call_tool", { name: mcpName(turn.use), arguments: turn.use.arguments }, `call_d${n}`),
          text(`used ${turn.use.tool}`),
        ];
      }
      return [nativeSearchThenCall(wire, turn.use, n), text(`used ${turn.use.tool}`)];
  }
}

/** A system (or, for OpenAI's reasoning models, developer) message. */
const isSystem = (message: any) => message?.role === "system" || message?.role === "developer";

/** The system prompt as each wire sends it: Anthropic's `system`, else the first system message. */
function systemOf(wire: Wire, body: any): string | undefined {
  if (wire === "anthropic") return JSON.stringify(body.system);
  const first = wire === "openai-responses" ? (body.instructions ?? body.input?.[0]) : body.messages?.[0];
  return typeof first === "string"
    ? JSON.stringify(first)
    : isSystem(first)
      ? JSON.stringify(first)
      : undefined;
}

/** Drops Anthropic's `cache_control` markers, which move to the newest block on every request. */
function withoutCacheControl(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCacheControl);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "cache_control")
      .map(([key, inner]) => [key, withoutCacheControl(inner)]),
  );
}

/**
 * The conversation of a request as the provider's cache reads it, in prefix order: Anthropic's
 * content blocks (the AI SDK merges consecutive user turns into one message, so blocks, not
 * messages, are what must stay put), OpenAI Chat's messages, OpenAI Responses' input items.
 */
function conversationOf(wire: Wire, body: any): string[] {
  if (wire === "anthropic") {
    return (body.messages as any[]).flatMap((message) =>
      typeof message.content === "string"
        ? [JSON.stringify({ role: message.role, content: message.content })]
        : (message.content as any[]).map((part) =>
            JSON.stringify({ role: message.role, part: withoutCacheControl(part) }),
          ),
    );
  }
  if (wire === "openai-chat") return (body.messages as any[]).map((message) => JSON.stringify(message));
  return (body.input as any[]).map((item) => JSON.stringify(item));
}

async function mcpCalls(workspace: string): Promise<{ name: string; arguments: unknown }[]> {
  const file = join(workspace, "mcp-calls.jsonl");
  if (!existsSync(file)) return [];
  return (await readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

/** JSON-escaped text, as it appears inside a request body. */
const inJson = (value: string) => JSON.stringify(value).slice(1, -1);

describe("60 skills and 200 deferred MCP tools over 30 turns", () => {
  it.each(["anthropic", "openai-responses", "openai-chat"] as const)(
    "on %s: the tools array and system prompt never change, the conversation only appends, and every skill and deferred tool is used",
    async (wire) => {
      const { command, args } = mcpServerDoubleCommand({ tools: 200, callLog: "mcp-calls.jsonl" });
      const w = await world({
        double: { wire },
        systemPrompt: '{% include "$podkit/default" %}',
        manifestExtra: [
          "[skills]",
          `[[mcp.server]]\nname = "big"\ncommand = ${JSON.stringify(command)}\nargs = ${JSON.stringify(args)}\ndefer = true`,
          // The double lives in this repository, outside the pod's scope: no OS sandbox here.
          '[sandbox]\nbackend = "none"',
        ].join("\n"),
      });
      const skillsDir = join(w.root, SKILLS);
      const written = await writeSkills(skillsDir, 60);
      const pod = await w.pod();

      const turns = plan();
      const requestsOfTurn: CapturedRequest[][] = [];
      for (const [i, turn] of turns.entries()) {
        const n = i + 1;
        if (n === ADDED_BEFORE_TURN) await writeSkill(skillsDir, ADDED_SKILL);
        w.double.enqueue(...responsesFor(wire, turn, n));
        const before = w.double.requests.length;
        const result = await pod.run(`user input ${n}`);
        expect(result, `turn ${n}`).toMatchObject({ status: "finished" });
        requestsOfTurn.push(w.double.requests.slice(before));
      }
      expect(w.double.pending()).toBe(0);

      const requests = w.double.requests;
      const bodies = requests.map((request) => request.body as any);
      // 30 answers, 6 skill loads, 12 deferred tools (the pair takes one request more for find_tools).
      expect(requests).toHaveLength(TURNS + 6 + (wire === "openai-chat" ? 24 : 12));

      // The head of the prefix: one tools array and one system prompt, byte for byte.
      expect(new Set(bodies.map((body) => JSON.stringify(body.tools))).size).toBe(1);
      expect(new Set(bodies.map((body) => systemOf(wire, body))).size).toBe(1);
      const system = systemOf(wire, bodies[0]);
      expect(system).toContain("## Skills");
      expect(system).toContain(inJson(`- skill-60: ${written[59]?.description}`));
      expect(system).not.toContain(ADDED_SKILL.name);
      const tools = bodies[0].tools as any[];
      const names = tools.map((tool) => tool.function?.name ?? tool.name);
      expect(names).toContain("skill");
      if (wire === "openai-chat") {
        // The pair stands in for the 200 deferred tools.
        expect(names).toEqual(expect.arrayContaining(["find_tools", "call_tool"]));
        expect(names.some((name) => name.startsWith("mcp__big__"))).toBe(false);
      } else {
        const deferred = tools.filter((tool) => (tool.name ?? "").startsWith("mcp__big__"));
        expect(deferred).toHaveLength(200);
        expect(deferred.every((tool) => tool.defer_loading === true)).toBe(true);
        expect(tools.at(-1)).toMatchObject({
          type: wire === "anthropic" ? "tool_search_tool_bm25_20251119" : "tool_search",
        });
      }

      // Dynamic context only appends: each request's conversation begins with the previous one's.
      for (let i = 1; i < bodies.length; i++) {
        const previous = conversationOf(wire, bodies[i - 1]);
        const current = conversationOf(wire, bodies[i]);
        expect(current.length, `request ${i} is shorter than request ${i - 1}`).toBeGreaterThan(
          previous.length,
        );
        expect(
          current.slice(0, previous.length),
          `request ${i} rewrites the conversation of ${i - 1}`,
        ).toEqual(previous);
      }

      // Every skill load reached the model as a tool result with the skill's body.
      const entries = await sessionEntries(w.workspace);
      const loads = entries.flatMap((e) =>
        e.kind === "extension" && e.domain === SKILLS_LOADED_DOMAIN ? [(e.payload as any).name] : [],
      );
      expect(loads).toEqual([...LISTED_SKILLS.slice(0, 4), ADDED_SKILL.name, LISTED_SKILLS[4]]);
      for (const [i, turn] of turns.entries()) {
        if (turn.kind !== "skill") continue;
        const answer = requestsOfTurn[i]?.at(-1)?.rawBody ?? "";
        const body =
          turn.name === ADDED_SKILL.name
            ? ADDED_SKILL.body
            : (written.find((skill) => skill.name === turn.name)?.body ?? "");
        expect(answer, `turn ${i + 1}: body of ${turn.name}`).toContain(inJson(body));
      }

      // The skill added mid-session was announced with the next turn, never put into the prefix.
      const announced = requestsOfTurn[ADDED_BEFORE_TURN - 1]?.[0]?.rawBody ?? "";
      expect(announced).toContain(inJson(`new skill ${ADDED_SKILL.name}: ${ADDED_SKILL.description}`));
      expect(requestsOfTurn[ADDED_BEFORE_TURN - 2]?.at(-1)?.rawBody).not.toContain(ADDED_SKILL.name);
      const notes = entries.filter((e) => e.kind === "system_item" && e.item.kind === "notification");
      expect(notes).toHaveLength(1);

      // The 12 deferred tools ran on the MCP server, in order, with the model's arguments.
      expect(await mcpCalls(w.workspace)).toEqual(
        DEFERRED.map((use) => ({ name: use.tool, arguments: use.arguments, era: "modern" })),
      );
      for (const [i, turn] of turns.entries()) {
        if (turn.kind !== "deferred") continue;
        const answer = requestsOfTurn[i]?.at(-1)?.rawBody ?? "";
        expect(answer, `turn ${i + 1}: result of ${turn.use.tool}`).toContain(`${turn.use.tool}: done`);
        if (wire === "openai-chat") {
          // find_tools showed the model the definition it then called.
          expect(requestsOfTurn[i]?.[1]?.rawBody).toContain(inJson(`"name": "${mcpName(turn.use)}"`));
        }
      }
      if (wire !== "openai-chat") {
        // The provider's 12 searches were logged and go back verbatim with the conversation.
        const types = conversationOf(wire, bodies.at(-1)).map((block) => {
          const parsed = JSON.parse(block);
          return parsed.part?.type ?? parsed.type;
        });
        const [search, found] =
          wire === "anthropic"
            ? ["server_tool_use", "tool_search_tool_result"]
            : ["tool_search_call", "tool_search_output"];
        expect(types.filter((type) => type === search)).toHaveLength(DEFERRED.length);
        expect(types.filter((type) => type === found)).toHaveLength(DEFERRED.length);
      }
    },
    120_000,
  );
});
