import { hasMarker, PodkitPodError } from "../errors.js";

const INVALID_SYSTEM_PROMPT_TEMPLATE_MARKER = Symbol.for("podkit.pod.error.invalid-system-prompt-template");

/** The system prompt template does not compile; no pod is created. */
export class InvalidSystemPromptTemplateError extends PodkitPodError {
  readonly [INVALID_SYSTEM_PROMPT_TEMPLATE_MARKER] = true;
  override name = "InvalidSystemPromptTemplateError";
  readonly template: string;
  readonly line: number;
  readonly column: number;

  constructor(message: string, at: { template: string; line: number; column: number }, cause: unknown) {
    super(message, { cause, hint: "Fix [worker].system_prompt at that line (nunjucks/Jinja2 syntax)." });
    this.template = at.template;
    this.line = at.line;
    this.column = at.column;
  }

  static override isInstance(error: unknown): error is InvalidSystemPromptTemplateError {
    return hasMarker(error, INVALID_SYSTEM_PROMPT_TEMPLATE_MARKER);
  }
}

const SYSTEM_PROMPT_RENDER_MARKER = Symbol.for("podkit.pod.error.system-prompt-render");

/**
 * Rendering the system prompt failed (undefined variable, missing include, an included file
 * that does not compile, …). The pod never proceeds without a system prompt.
 */
export class SystemPromptRenderError extends PodkitPodError {
  readonly [SYSTEM_PROMPT_RENDER_MARKER] = true;
  override name = "SystemPromptRenderError";
  readonly template: string;

  constructor(template: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    const hint = (cause as { hint?: unknown } | null)?.hint;
    super(`cannot render the system prompt (${template}): ${why}`, {
      cause,
      hint:
        typeof hint === "string"
          ? hint
          : "fix the template at the place shown; `podkit prompt render` renders it without calling a model",
    });
    this.template = template;
  }

  static override isInstance(error: unknown): error is SystemPromptRenderError {
    return hasMarker(error, SYSTEM_PROMPT_RENDER_MARKER);
  }
}
