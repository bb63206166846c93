import { readFile, realpath } from "node:fs/promises";
import { join, sep } from "node:path";
import { builtinPromptsDir } from "../builtin-resources.js";
import { TemplateEnvironment } from "../template/environment.js";
import type { CompiledTemplate, LinkedTemplate } from "../template/scope.js";
import { readBuiltinOnce } from "./builtin-file-cache.js";
import {
  InvalidPromptRefError,
  PromptIoError,
  PromptNotFoundError,
  PromptRootEscapeError,
  type RefSite,
  UnconfiguredPromptPrefixError,
} from "./errors.js";
import {
  originOf,
  type PromptOrigin,
  type PromptPrefix,
  type PromptRef,
  parsePromptRef,
} from "./prompt-ref.js";
import { findRootEscape, type RootEscape } from "./root-containment.js";

/** Root directory of each prefix; an absent entry makes the prefix "unconfigured". */
export interface PromptRoots {
  readonly podkit?: string;
  readonly user?: string;
  readonly workspace?: string;
}

/**
 * The directory each root must stay inside once symbolic links are resolved: the user config
 * dir for `$user`, the workspace for `$workspace`. A root that escapes its owner is refused.
 */
export type PromptRootOwners = Readonly<Partial<Record<PromptPrefix, string>>>;

/** Where podkit looks for prompt files, from which the three roots are derived. */
export interface PromptLocations {
  /** `<user config dir>`; `$user/…` resolves in `<userConfigDir>/prompts/`. */
  readonly userConfigDir?: string;
  /** The workspace; `$workspace/…` resolves in `<workspace>/.podkit/prompts/`. */
  readonly workspace?: string;
  /** Override of the builtin `resources/prompts` directory (`$podkit/…`). */
  readonly builtinDir?: string;
}

/** Derives the `$prefix` roots from the user config dir and the workspace. */
export function promptRootsFor(locations: PromptLocations): PromptRoots {
  return {
    podkit: locations.builtinDir ?? builtinPromptsDir(),
    ...(locations.userConfigDir ? { user: join(locations.userConfigDir, "prompts") } : {}),
    ...(locations.workspace ? { workspace: join(locations.workspace, ".podkit", "prompts") } : {}),
  };
}

/** The owning directories of the roots `promptRootsFor` derives. */
export function promptRootOwnersFor(locations: PromptLocations): PromptRootOwners {
  return {
    ...(locations.userConfigDir ? { user: locations.userConfigDir } : {}),
    ...(locations.workspace ? { workspace: locations.workspace } : {}),
  };
}

interface Node {
  readonly name: string;
  readonly file: string | undefined;
  readonly compiled: CompiledTemplate;
  readonly deps: Map<string, LinkedTemplate | null>;
  readonly origin: PromptOrigin | undefined;
  depsReady?: Promise<void>;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Resolves `$prefix` references to files, reads and compiles them (each once per loader), and
 * links templates to everything they include or import before they render. All I/O of a
 * render happens here, up front; a missing file or a syntax error in an included file is a
 * rejected promise naming the ref, the file and the including template.
 */
export class PromptLoader {
  readonly environment: TemplateEnvironment;
  readonly roots: Readonly<PromptRoots>;
  readonly owners: PromptRootOwners;
  private readonly nodes = new Map<string, Promise<Node>>();
  private readonly realRoots = new Map<PromptPrefix, Promise<string | RootEscape>>();

  constructor(options: { roots: PromptRoots; owners?: PromptRootOwners; environment?: TemplateEnvironment }) {
    this.roots = Object.freeze({ ...options.roots });
    this.owners = Object.freeze({ ...options.owners });
    this.environment = options.environment ?? new TemplateEnvironment();
  }

  /** A loader for the standard roots of a user config dir and a workspace. */
  static create(locations: PromptLocations, options?: { environment?: TemplateEnvironment }): PromptLoader {
    return new PromptLoader({
      roots: promptRootsFor(locations),
      owners: promptRootOwnersFor(locations),
      environment: options?.environment,
    });
  }

  /** Parses a reference (no I/O); see `parsePromptRef`. */
  resolve(raw: string, from?: PromptOrigin, site?: RefSite): PromptRef {
    return parsePromptRef(raw, from, site);
  }

  /**
   * The canonical path of `ref`'s file. Refuses an unconfigured or absent root, a missing file,
   * and a file whose real path (symlinks resolved) lies outside its prefix root.
   */
  async locate(ref: PromptRef, site?: RefSite): Promise<string> {
    const rootReal = await this.realRoot(ref, site);
    const root = this.roots[ref.prefix] as string;
    const file = join(root, ...ref.segments);
    let real: string;
    try {
      real = await realpath(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") throw new PromptNotFoundError(ref.ref, file, site);
      throw new PromptIoError(ref.ref, file, (error as Error).message, site, error);
    }
    if (real !== rootReal && !real.startsWith(rootReal + sep)) {
      throw new InvalidPromptRefError(
        `prompt reference ${ref.ref} resolves to ${real}, outside the $${ref.prefix} root ${rootReal} (through a symbolic link); refused`,
        ref.ref,
        site,
      );
    }
    return real;
  }

  /** Reads `ref` as UTF-8 text (for prompt files and `$prefix` prompt packs). */
  async readText(ref: PromptRef, site?: RefSite): Promise<{ file: string; text: string }> {
    const file = await this.locate(ref, site);
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const problem = code === "EISDIR" ? "it is a directory" : (error as Error).message;
      throw new PromptIoError(ref.ref, file, problem, site, error);
    }
    try {
      return { file, text: utf8.decode(bytes) };
    } catch (error) {
      throw new PromptIoError(ref.ref, file, "the file is not valid UTF-8", site, error);
    }
  }

  /** Loads the prompt file `raw` (e.g. `$podkit/default`) and everything it includes. */
  async load(raw: string, from?: PromptOrigin, site?: RefSite): Promise<LinkedTemplate> {
    const node = await this.node(this.resolve(raw, from, site), site);
    await this.completeGraph(node);
    return node;
  }

  /**
   * Links a template compiled from a string (a manifest value, a catalog entry): resolves and
   * loads everything it references. Without `origin`, only `$prefix/…` references are valid.
   */
  async link(
    compiled: CompiledTemplate,
    options?: { origin?: PromptOrigin; file?: string },
  ): Promise<LinkedTemplate> {
    const node: Node = {
      name: compiled.name,
      file: options?.file,
      compiled,
      deps: new Map(),
      origin: options?.origin,
    };
    await this.completeGraph(node);
    return node;
  }

  private async realRoot(ref: PromptRef, site: RefSite | undefined): Promise<string> {
    const root = this.roots[ref.prefix];
    if (!root) {
      throw new UnconfiguredPromptPrefixError(
        `prompt prefix $${ref.prefix} is not configured here, so ${ref.ref} cannot be resolved`,
        ref.ref,
        site,
      );
    }
    let pending = this.realRoots.get(ref.prefix);
    if (!pending) {
      pending = this.checkedRealRoot(ref.prefix, root);
      this.realRoots.set(ref.prefix, pending);
      pending.catch(() => this.realRoots.delete(ref.prefix));
    }
    let checked: string | RootEscape;
    try {
      checked = await pending;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") {
        throw new UnconfiguredPromptPrefixError(
          `prompt prefix $${ref.prefix} is not configured: its root ${root} does not exist, so ${ref.ref} cannot be resolved`,
          ref.ref,
          site,
          { hint: `Create ${root} and put the prompt file there.` },
        );
      }
      throw new PromptIoError(ref.ref, root, (error as Error).message, site, error);
    }
    if (typeof checked !== "string") throw new PromptRootEscapeError(ref.ref, ref.prefix, checked, site);
    return checked;
  }

  /** The real path of `root`, or where it escapes the directory that owns it. */
  private async checkedRealRoot(prefix: PromptPrefix, root: string): Promise<string | RootEscape> {
    const real = await realpath(root);
    const owner = this.owners[prefix];
    return (owner === undefined ? null : await findRootEscape(owner, root)) ?? real;
  }

  private node(ref: PromptRef, site: RefSite | undefined): Promise<Node> {
    let pending = this.nodes.get(ref.ref);
    if (!pending) {
      pending = this.readNode(ref, site);
      this.nodes.set(ref.ref, pending);
      // A failure is reported to this includer; the next one retries and gets its own message.
      pending.catch(() => this.nodes.delete(ref.ref));
    }
    return pending;
  }

  private async readNode(ref: PromptRef, site: RefSite | undefined): Promise<Node> {
    const builtin = ref.prefix === "podkit" ? join(this.roots.podkit ?? "", ...ref.segments) : "";
    const { file, text } = await readBuiltinOnce(builtin, () => this.readText(ref, site));
    const compiled = this.environment.compile(ref.ref, text, file);
    return { name: ref.ref, file, compiled, deps: new Map(), origin: originOf(ref) };
  }

  // Depth-first over the include graph (a stack); cycles are fine (each node resolves its own edges once).
  private async completeGraph(root: Node): Promise<void> {
    const seen = new Set<Node>();
    const queue: Node[] = [root];
    for (let node = queue.pop(); node; node = queue.pop()) {
      if (seen.has(node)) continue;
      seen.add(node);
      node.depsReady ??= this.resolveEdges(node);
      await node.depsReady;
      for (const dep of node.deps.values()) if (dep) queue.push(dep as Node);
    }
  }

  private async resolveEdges(node: Node): Promise<void> {
    for (const reference of node.compiled.references) {
      if (node.deps.has(reference.ref)) continue;
      const site: RefSite = { template: node.name, line: reference.line };
      const target = parsePromptRef(reference.ref, node.origin, site);
      try {
        node.deps.set(reference.ref, await this.node(target, site));
      } catch (error) {
        const absent =
          PromptNotFoundError.isInstance(error) || UnconfiguredPromptPrefixError.isInstance(error);
        if (!(reference.ignoreMissing && absent)) throw error;
        node.deps.set(reference.ref, null);
      }
    }
  }
}
