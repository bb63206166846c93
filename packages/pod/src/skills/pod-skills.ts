import { realpath } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Item, Tool, ToolCallItem } from "@podkit/llm-worker";
import type { LoadedManifest, PermissionMode, PermissionRule, SkillsConfig } from "@podkit/manifest";
import type { HistorySource, SessionLog, Store, SystemItem } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { PermissionPolicy } from "../permissions/permissions.js";
import { SkillPermissionPolicy, skillAllowance } from "./skill-approvals.js";
import { knownInLineage } from "./skill-lineage.js";
import { type SkillsVariable, skillListing } from "./skill-listing.js";
import { isInside } from "./skill-paths.js";
import {
  type ActiveSkill,
  recordOf,
  SKILLS_KNOWN_DOMAIN,
  SKILLS_LOADED_DOMAIN,
  type SkillMode,
  type SkillsKnown,
  type SkillsLoaded,
  skillsKnownSchema,
  skillsLoadedSchema,
} from "./skill-records.js";
import { skillCarryOver } from "./skill-reinject.js";
import { type SkillScan, scanSkills } from "./skill-scan.js";
import { type SkillLoad, skillTool, workspacePath } from "./skill-tool.js";

/** What the pod's skills need of the pod. */
export interface PodSkillsContext {
  readonly loaded: LoadedManifest;
  readonly catalog: PromptCatalog;
  readonly store: Store<Item>;
  /** The head segment, once the session exists. */
  head(): SessionLog<Item> | undefined;
  /** Appends an `extension` entry to the head segment. */
  append(domain: string, payload: unknown): Promise<void>;
  /** Queues a notification for the model (the pod's notification queue). */
  notify(message: string): void;
  warn(message: string): void;
}

/**
 * A pod's skills (docs/skills.md), the one owner of their state: the mode and the skills the model
 * was told about (`skills.known`), the skills active in the segment (`skills.loaded`), and the loads
 * of the calls in flight. It renders the listing once, with the system prompt; offers the `skill`
 * tool; logs each load with its digest before the call's result; tells the model of skills
 * changed on disk by a notification at the start of a turn; carries active skills across a
 * compaction; and lends their `allowed-tools` to the permission check when the manifest opts in.
 */
export class PodSkills {
  /** Undefined until rendered or restored; stays so for a restored session that began without skills. */
  private known: SkillsKnown | undefined;
  private active = new Map<string, ActiveSkill>();
  private readonly pending = new Map<string, SkillLoad>();
  /** What the last compaction carried over, applied once its segment is the head. */
  private carried: ReadonlySet<string> | undefined;
  /** Problems already reported (once each, not every turn). */
  private readonly reported = new Set<string>();
  private canonicalWorkspace: string | undefined;
  /** The compacted segments behind a restored head were searched for `skills.known` (`recoverKnown`). */
  private lookedBack = false;

  private constructor(
    private readonly config: SkillsConfig,
    private readonly context: PodSkillsContext,
  ) {}

  /** The pod's skills when its manifest has `[skills]`. */
  static of(context: PodSkillsContext): PodSkills | undefined {
    const config = context.loaded.manifest.skills;
    return config === undefined ? undefined : new PodSkills(config, context);
  }

  /** The listing's mode; undefined when this session offers no `skill` tool. */
  get mode(): SkillMode | undefined {
    return this.known?.mode;
  }

  /**
   * The `skill` tool, as the tool server's factory calls it when the tool list becomes final — after
   * `render()` for a new session, or with the mode its log records for a restored one (none for a
   * session that began without skills: its tool list stays what it was).
   */
  async tools(): Promise<Tool[]> {
    const mode = this.mode;
    if (mode === undefined) return [];
    const workspace = await this.workspace();
    return [
      skillTool({
        mode,
        catalog: this.context.catalog,
        workspace,
        scope: this.context.loaded.scope,
        scan: () => this.scan(),
        loaded: (callId, load) => this.pending.set(callId, load),
      }),
    ];
  }

  /**
   * The system prompt's `skills` variable, rendered once with it: every skill is read, a problem is
   * a `SkillDefinitionError` naming its file, and the listing is measured against its budget.
   */
  async render(): Promise<SkillsVariable> {
    const scan = await this.scan();
    const problem = scan.problems[0];
    if (problem !== undefined) throw problem;
    for (const name of this.config.only ?? []) {
      if (!scan.skills.has(name))
        this.context.warn(`[skills] enabled names "${name}", which no skills directory holds`);
    }
    const { variable, known } = skillListing(scan, this.config, this.context.catalog);
    this.known = known;
    return variable;
  }

  /** The session was created with the rendered prompt: what the model was told goes into its log. */
  async recordStart(): Promise<void> {
    if (this.known !== undefined) await this.context.append(SKILLS_KNOWN_DOMAIN, this.known);
  }

  /** Takes the state of the segment the pod continues in (restore, rollback, another writer's head). */
  syncFromLog(log: SessionLog<Item> | undefined): void {
    if (log === undefined) return;
    this.known = recordOf(log.state.extensions, SKILLS_KNOWN_DOMAIN, skillsKnownSchema) ?? this.known;
    const loaded = recordOf(log.state.extensions, SKILLS_LOADED_DOMAIN, skillsLoadedSchema);
    this.active = new Map((loaded?.active ?? []).map((skill) => [skill.name, skill]));
  }

  /** After a call: what it loaded becomes a `skills.loaded` entry, before the call's result is committed. */
  async afterCall(call: ToolCallItem): Promise<void> {
    const load = this.pending.get(call.call_id);
    if (load === undefined) return;
    this.pending.delete(call.call_id);
    const { skill, file } = load;
    if (file === undefined) {
      this.active.delete(skill.name);
      this.active.set(skill.name, {
        name: skill.name,
        digest: skill.digest,
        allowed_tools: [...skill.allowedTools],
        writable: await this.writable(skill.file),
      });
    }
    const workspace = await this.workspace();
    const payload: SkillsLoaded = {
      call_id: call.call_id,
      name: skill.name,
      digest: skill.digest,
      path: workspacePath(workspace, skill.file),
      ...(file === undefined
        ? { allowed_tools: [...skill.allowedTools] }
        : { file: file.path, file_digest: file.digest }),
      active: [...this.active.values()],
    };
    await this.context.append(SKILLS_LOADED_DOMAIN, payload);
  }

  /**
   * At the start of a turn: skills added, changed or removed on disk since the model was last told
   * become one notification (never a change to the system prompt or the tool list), and what the
   * model now knows goes into the log. A skill that is not valid now is reported as a warning and
   * left as the model knew it.
   */
  async announceChanges(): Promise<void> {
    await this.recoverKnown();
    const known = this.known;
    if (known === undefined) return;
    const scan = await this.scan();
    const broken = new Set<string>();
    for (const problem of scan.problems) {
      broken.add(basename(dirname(problem.file)));
      if (!this.reported.has(problem.message)) {
        this.reported.add(problem.message);
        this.context.warn(`a skill cannot be used: ${problem.message}`);
      }
    }
    const before = new Map(known.skills.map((skill) => [skill.name, skill.digest]));
    const added = [...scan.skills.values()].filter((skill) => !before.has(skill.name));
    const changed = [...scan.skills.values()].filter(
      (skill) => before.has(skill.name) && before.get(skill.name) !== skill.digest,
    );
    const removed = [...before.keys()].filter((name) => !scan.skills.has(name) && !broken.has(name));
    if (added.length + changed.length + removed.length === 0) return;
    const summary = ({ name, description }: { name: string; description: string }) => ({ name, description });
    this.context.notify(
      this.context.catalog.render("skills_changed", {
        added: added.map(summary),
        changed: changed.map((skill) => ({ ...summary(skill), loaded: this.active.has(skill.name) })),
        removed,
      }),
    );
    const kept = known.skills.filter((skill) => broken.has(skill.name) && !scan.skills.has(skill.name));
    const skills = [...[...scan.skills.values()].map(({ name, digest }) => ({ name, digest })), ...kept].sort(
      (a, b) => (a.name < b.name ? -1 : 1),
    );
    this.known = { mode: known.mode, skills };
    await this.context.append(SKILLS_KNOWN_DOMAIN, this.known);
  }

  /** The attachments a compaction adds to the new history: the active skills' logged bodies, within the budget. */
  carryOver(input: {
    items: readonly Item[];
    sources: readonly HistorySource[];
    split: number;
  }): SystemItem[] {
    const carried = skillCarryOver({
      ...input,
      budget: this.config.reinject_budget_tokens,
      catalog: this.context.catalog,
      digestOf: (name) => this.active.get(name)?.digest,
    });
    this.carried = carried.kept;
    return [...carried.items];
  }

  /** The compacted segment is the head: the skills the model knows and those still active go into its log. */
  async movedToCompacted(): Promise<void> {
    const kept = this.carried ?? new Set<string>();
    this.carried = undefined;
    this.active = new Map([...this.active].filter(([name]) => kept.has(name)));
    if (this.known === undefined) return;
    await this.context.append(SKILLS_KNOWN_DOMAIN, this.known);
    await this.context.append(SKILLS_LOADED_DOMAIN, {
      active: [...this.active.values()],
    } satisfies SkillsLoaded);
  }

  /**
   * The permission check of the pod: the manifest's mode and rules, then — with
   * `[skills] allow_tools = true` — the active skills' `allowed-tools` (docs/skills.md, "allowed-tools").
   */
  permissionPolicy(
    mode: PermissionMode,
    rules: readonly PermissionRule[],
    isReadOnly: (tool: string) => boolean,
  ): PermissionPolicy {
    const allowance = (call: Pick<ToolCallItem, "name" | "arguments">) =>
      this.config.allow_tools ? skillAllowance(call, this.active.values()) : undefined;
    return new SkillPermissionPolicy(mode, rules, isReadOnly, allowance);
  }

  /**
   * A restored head without `skills.known` that a compaction started (the process died before the
   * compaction wrote it): the segments it was cut from say what the model was told, and it goes
   * into the head before the tool list is made final (the first run's flush follows its prelude).
   */
  private async recoverKnown(): Promise<void> {
    if (this.known !== undefined || this.lookedBack) return;
    this.lookedBack = true;
    const head = this.context.head();
    if (head?.state.lineage.compactedFrom == null) return;
    const found = await knownInLineage(this.context.store, head);
    if (found === undefined) return;
    this.known = found;
    await this.context.append(SKILLS_KNOWN_DOMAIN, found);
  }

  private async scan(): Promise<SkillScan> {
    return scanSkills({
      config: this.config,
      workspace: await this.workspace(),
      scope: this.context.loaded.scope,
    });
  }

  private async workspace(): Promise<string> {
    this.canonicalWorkspace ??= await realpath(this.context.loaded.workspace).catch(
      () => this.context.loaded.workspace,
    );
    return this.canonicalWorkspace;
  }

  /**
   * Whether the pod could have written this SKILL.md itself: the scope grants write there and it
   * is not under `.podkit/`, which no tool and no sandboxed process may write. Such a skill's
   * `allowed-tools` pre-approve nothing — the pod could give itself any tool.
   */
  private async writable(file: string): Promise<boolean> {
    const podkitDir = join(await this.workspace(), ".podkit");
    if (isInside(file, podkitDir)) return false;
    return this.context.loaded.scope.permissionAtCanonical(file) === "write";
  }
}
