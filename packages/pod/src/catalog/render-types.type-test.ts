import type { PromptCatalog } from "./prompt-catalog.js";

/**
 * Type-level test of `PromptCatalog.render`, compiled by `tsc -b` with the package (never run).
 * Each `@ts-expect-error` must meet an error, or the build fails with TS2578; the matching
 * runtime test (build-checks.test.ts) compiles the same calls without the directives and
 * asserts tsc rejects each one.
 */
export function renderTypeChecks(catalog: PromptCatalog): string[] {
  return [
    catalog.render("notify_wrapper", { message: "typed" }),
    catalog.render("interrupt_tool_result_summary"),
    catalog.render("interrupt_system_note", { trigger: "notify" }),
    catalog.render("context_update_section", { sections: [{ id: "memory", text: "…" }] }),
    // @ts-expect-error `message` is required
    catalog.render("notify_wrapper", {}),
    // @ts-expect-error `message` must be a string
    catalog.render("notify_wrapper", { message: 1 }),
    // @ts-expect-error not a PodPrompt key
    catalog.render("no_such_prompt", {}),
    // @ts-expect-error the context of agents_md_section is required
    catalog.render("agents_md_section"),
    // @ts-expect-error another key's context
    catalog.render("working_boundaries_section", { message: "x" }),
    // @ts-expect-error unknown property
    catalog.render("notify_wrapper", { message: "x", extra: 1 }),
    // @ts-expect-error the interrupt note's variant is chosen by its trigger
    catalog.render("interrupt_system_note"),
    // @ts-expect-error no such trigger
    catalog.render("interrupt_system_note", { trigger: "timer" }),
  ];
}
