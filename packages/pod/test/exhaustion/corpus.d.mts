/** Types of corpus.mjs (plain JavaScript so the child process can run it without a build). */
export interface ExhaustionCase {
  readonly name: string;
  /** `limit`: a TemplateLimitError while rendering; `syntax`: a TemplateSyntaxError while compiling. */
  readonly kind: "limit" | "syntax";
  readonly source: string;
}
export declare const CORPUS: readonly ExhaustionCase[];
export declare const PLACEMENTS: readonly ["system prompt", "pack value", "included file"];
export declare const WORKSPACE_FILES: Readonly<Record<string, string>>;
