import type { Item } from "@podkit/llm-worker";
import type { HistorySource, SystemItem } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import { SKILL_TOOL_NAME } from "./skill-tool.js";

/** A skill's body as the segment's history holds it: a `skill` result, or a re-injected attachment. */
interface LoggedLoad {
  readonly name: string;
  readonly index: number;
  /** The `skill` result's summary (what the model saw), or the whole attachment already wrapped. */
  readonly text: string;
  readonly wrapped: boolean;
}

/** What a compaction carries over of the skills: attachments for the new history, and which skills stay active. */
export interface SkillCarryOver {
  readonly items: readonly SystemItem[];
  /** Skills whose bodies are in the new segment: re-injected, or loaded in the retained tail. */
  readonly kept: ReadonlySet<string>;
}

/**
 * The skill bodies a compaction re-injects (docs/skills.md, "After compaction"): every skill loaded
 * in the summarised part of `items` (before `split`) and not again in the retained tail, its latest
 * load, newest first while the bodies fit `budget` tokens (UTF-8 bytes / 4), then in the order they
 * were loaded. Each is the logged result itself — never the file read again — wrapped by the
 * catalog's `skill_reinjected`, as an `attachment` naming the skill and its digest. Those over the
 * budget are named in one `skills_not_reinjected` note, never dropped silently.
 */
export function skillCarryOver(input: {
  readonly items: readonly Item[];
  readonly sources: readonly HistorySource[];
  readonly split: number;
  readonly budget: number;
  readonly catalog: PromptCatalog;
  readonly digestOf: (name: string) => string | undefined;
}): SkillCarryOver {
  const loads = loggedLoads(input.items, input.sources);
  const retained = new Set(loads.filter((load) => load.index >= input.split).map((load) => load.name));
  const latest = new Map<string, LoggedLoad>();
  for (const load of loads)
    if (load.index < input.split && !retained.has(load.name)) latest.set(load.name, load);
  const picked: LoggedLoad[] = [];
  const skipped: string[] = [];
  let spent = 0;
  for (const load of [...latest.values()].sort((a, b) => b.index - a.index)) {
    const body = load.wrapped
      ? load.text
      : input.catalog.render("skill_reinjected", { name: load.name, loaded: load.text });
    const tokens = Math.ceil(Buffer.byteLength(body) / 4);
    if (spent + tokens > input.budget) {
      skipped.push(load.name);
      continue;
    }
    spent += tokens;
    picked.push({ ...load, text: body });
  }
  const items: SystemItem[] = picked
    .sort((a, b) => a.index - b.index)
    .map((load) => {
      const digest = input.digestOf(load.name);
      return {
        kind: "attachment",
        body: load.text,
        skill: load.name,
        ...(digest === undefined ? {} : { digest }),
      };
    });
  if (skipped.length > 0) {
    const names = skipped.sort();
    items.push({
      kind: "attachment",
      body: input.catalog.render("skills_not_reinjected", { names, budget: input.budget }),
    });
  }
  return { items, kept: new Set([...retained, ...picked.map((load) => load.name)]) };
}

/** Every skill body in `items`, in order: successful `skill(name)` results and re-injected attachments. */
function loggedLoads(items: readonly Item[], sources: readonly HistorySource[]): LoggedLoad[] {
  const calls = new Map<string, string>();
  const attachments = new Map<number, string>();
  for (const source of sources) {
    const skill =
      source.from === "system_item" && source.item.kind === "attachment" ? source.item.skill : undefined;
    if (typeof skill === "string") attachments.set(source.index, skill);
  }
  const loads: LoggedLoad[] = [];
  items.forEach((item, index) => {
    if (item.type === "tool_call" && item.name === SKILL_TOOL_NAME) {
      const name = loadedName(item.arguments);
      if (name !== undefined) calls.set(item.call_id, name);
    } else if (item.type === "tool_result" && item.is_error !== true) {
      const name = calls.get(item.call_id);
      if (name !== undefined) loads.push({ name, index, text: item.summary, wrapped: false });
    } else if (item.type === "message" && attachments.has(index)) {
      const text = item.content.map((part) => part.text).join("");
      loads.push({ name: attachments.get(index) as string, index, text, wrapped: true });
    }
  });
  return loads;
}

/** The skill a `skill` call's arguments load as a body (a name without file or query). */
function loadedName(text: string): string | undefined {
  try {
    const args = JSON.parse(text) as Record<string, unknown>;
    if (typeof args !== "object" || args === null) return undefined;
    if (args.file !== undefined || args.query !== undefined) return undefined;
    return typeof args.name === "string" ? args.name : undefined;
  } catch {
    return undefined;
  }
}
