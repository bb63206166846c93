import type { Tool, ToolOutput } from "@podkit/llm-worker";
import { z } from "zod";
import type { PodPrompt, PodPromptContextArgs } from "../catalog/pod-prompt.js";
import { canonicalJson } from "../context/context-key.js";
import type { SubpodRole } from "./roles.js";

/** What the four tools call: the parent's `SubpodHost`. */
export interface SubpodToolTarget {
  spawn(
    role: string,
    task: string,
    background: boolean,
    ctx: { callId: string; signal: AbortSignal },
  ): Promise<ToolOutput>;
  send(id: string, message: string, ctx: { callId: string; signal: AbortSignal }): Promise<ToolOutput>;
  stop(id: string): Promise<ToolOutput>;
  list(): Promise<ToolOutput>;
}

/**
 * The tools the parent's model gets: `spawn_pod`, `send_pod`, `stop_pod`, `list_pods`. The role
 * list (with each description) is in `spawn_pod`'s description, so the model chooses by it.
 * Every refusal is an error result naming what is allowed, never a thrown exception. A pod at
 * `depth` none of whose roles may run one level deeper (`max_depth`) gets no tools at all: a
 * `spawn_pod` that can only be refused is not offered.
 */
export function subpodTools(
  roles: ReadonlyMap<string, SubpodRole>,
  target: SubpodToolTarget,
  depth: number,
  text: <K extends PodPrompt>(key: K, ...context: PodPromptContextArgs<K>) => string,
): Tool[] {
  if (![...roles.values()].some((role) => depth + 1 <= role.config.max_depth)) return [];
  // A role with a typed answer shows its schema, so the parent knows what the child will return.
  const roleList = [...roles.values()].map((role) => ({
    name: role.name,
    description: role.config.description,
    ...(role.output === undefined ? {} : { output: canonicalJson(role.output.jsonSchema) }),
  }));
  return [
    {
      name: "spawn_pod",
      // A child runs under a mode no looser than its parent's: in `read_only` it changes nothing either.
      readOnly: true,
      description: text("subpod_spawn_tool_description", { roles: roleList }),
      inputSchema: z.object({
        role: z.string().describe("one of the roles listed above"),
        task: z.string().min(1).describe("what the child should do: its first user input"),
        background: z.boolean().optional().describe("return at once; the result arrives as a notification"),
      }),
      execute: (args: { role: string; task: string; background?: boolean }, ctx) =>
        target.spawn(args.role, args.task, args.background === true, ctx),
    },
    {
      name: "send_pod",
      // A child runs under a mode no looser than its parent's: in `read_only` it changes nothing either.
      readOnly: true,
      description: text("subpod_send_tool_description"),
      inputSchema: z.object({ id: z.string().min(1), message: z.string().min(1) }),
      execute: (args: { id: string; message: string }, ctx) => target.send(args.id, args.message, ctx),
    },
    {
      name: "stop_pod",
      // A child runs under a mode no looser than its parent's: in `read_only` it changes nothing either.
      readOnly: true,
      description: text("subpod_stop_tool_description"),
      inputSchema: z.object({ id: z.string().min(1) }),
      execute: (args: { id: string }) => target.stop(args.id),
    },
    {
      name: "list_pods",
      // A child runs under a mode no looser than its parent's: in `read_only` it changes nothing either.
      readOnly: true,
      description: text("subpod_list_tool_description"),
      inputSchema: z.object({}),
      execute: () => target.list(),
    },
  ];
}
