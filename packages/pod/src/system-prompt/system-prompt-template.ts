import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { PromptLoader } from "../prompt-ref/prompt-loader.js";
import { TemplateSyntaxError } from "../template/errors.js";
import type { CompiledTemplate } from "../template/scope.js";
import { InvalidSystemPromptTemplateError, SystemPromptRenderError } from "./errors.js";
import type { SystemPromptContext } from "./system-prompt-context.js";

/** The body of a rendered system prompt, before the trailing sections. */
export interface SystemPromptBody {
  readonly text: string;
  /** Whether the template itself used `files.agents_md` (then it is not appended again). */
  readonly usedAgentsMd: boolean;
}

/** Default name of the template in messages: where it comes from in the manifest. */
export const SYSTEM_PROMPT_TEMPLATE_NAME = "[worker].system_prompt";

/**
 * `[worker].system_prompt`: parsed eagerly when the pod is constructed, rendered once,
 * lazily, at the first run. Includes are resolved, read and compiled at render time through the
 * loader (all before any output is produced), so a missing or broken included file is a
 * rejected promise naming that file, never an uncaught exception.
 */
export class SystemPromptTemplate {
  private constructor(
    private readonly compiled: CompiledTemplate,
    private readonly loader: PromptLoader,
    private readonly file: string | undefined,
  ) {}

  /** The template's name in messages. */
  get name(): string {
    return this.compiled.name;
  }

  get source(): string {
    return this.compiled.source;
  }

  /**
   * Syntax-checks and compiles `source` (no I/O). Throws `InvalidSystemPromptTemplateError`
   * with the template name, line and column.
   */
  static parse(
    source: string,
    loader: PromptLoader,
    options?: { name?: string; file?: string },
  ): SystemPromptTemplate {
    const name = options?.name ?? SYSTEM_PROMPT_TEMPLATE_NAME;
    try {
      return new SystemPromptTemplate(
        loader.environment.compile(name, source, options?.file),
        loader,
        options?.file,
      );
    } catch (error) {
      if (!TemplateSyntaxError.isInstance(error)) throw error;
      throw new InvalidSystemPromptTemplateError(
        `invalid system prompt template ${name}: ${error.problem} at line ${error.line}, column ${error.column}`,
        { template: name, line: error.line, column: error.column },
        error,
      );
    }
  }

  /** Renders the template alone (no trailing sections). Rejects with `SystemPromptRenderError`. */
  async renderBody(context: SystemPromptContext): Promise<SystemPromptBody> {
    try {
      const linked = await this.loader.link(this.compiled, { file: this.file });
      const result = this.loader.environment.render(linked, context as unknown as Record<string, unknown>, {
        watch: { variable: "files", attribute: "agents_md" },
      });
      return { text: result.text, usedAgentsMd: result.watchedRead };
    } catch (error) {
      throw new SystemPromptRenderError(this.name, error);
    }
  }

  /**
   * Renders the full system prompt: the body, then the catalog's `working_boundaries_section`
   * and — when AGENTS.md was read and the template did not use it — `agents_md_section`.
   */
  async render(context: SystemPromptContext, catalog: PromptCatalog): Promise<string> {
    const body = await this.renderBody(context);
    const sections: string[] = [];
    try {
      sections.push(catalog.render("working_boundaries_section", { scope_summary: context.scope.summary }));
      const agentsMd = context.files.agents_md;
      if (agentsMd !== undefined && !body.usedAgentsMd) {
        sections.push(catalog.render("agents_md_section", { agents_md: agentsMd }));
      }
    } catch (error) {
      throw new SystemPromptRenderError(this.name, error);
    }
    return joinSystemPromptSections(body.text, sections);
  }
}

/**
 * The join rule of the trailing sections: body, blank line, section, blank line, section. Empty sections (a pack
 * may set one to "" to disable it) are skipped; trailing whitespace is trimmed.
 */
export function joinSystemPromptSections(body: string, sections: readonly string[]): string {
  const parts = [body.trimEnd(), ...sections.map((s) => s.replace(/^\n+/, "").trimEnd())].filter(
    (p) => p !== "",
  );
  return parts.join("\n\n");
}
