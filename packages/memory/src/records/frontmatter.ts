import { isMap, parseDocument, stringify } from "yaml";
import type { RecordKind } from "./layout.js";
import { FIELD_ORDER } from "./record-schema.js";

/** A record file split into its YAML frontmatter and Markdown body. */
export type SplitRecord =
  | { ok: true; frontmatter: Record<string, unknown>; body: string }
  | { ok: false; problem: string; line?: number };

/**
 * Splits `text` into frontmatter (a YAML mapping between `---` lines at the top) and body,
 * parsed with the `yaml` package. Problems name the line inside the file.
 */
export function splitRecord(text: string): SplitRecord {
  const lines = text.split("\n").map((line) => line.replace(/\r$/, ""));
  if (lines[0]?.trimEnd() !== "---") {
    return { ok: false, problem: 'the record has no frontmatter: it must start with a "---" line', line: 1 };
  }
  const close = lines.findIndex((line, i) => i > 0 && line.trimEnd() === "---");
  if (close < 0) return { ok: false, problem: 'the frontmatter is not closed by a "---" line', line: 1 };
  const yamlText = lines.slice(1, close).join("\n");
  const doc = parseDocument(yamlText, { prettyErrors: false, uniqueKeys: true });
  const error = doc.errors[0];
  if (error !== undefined) {
    const line: number = yamlText.slice(0, error.pos[0]).split("\n").length;
    return {
      ok: false,
      problem: `the frontmatter is not valid YAML: ${error.message.split("\n")[0]}`,
      // +1 for the opening "---" line.
      line: line + 1,
    };
  }
  if (doc.contents !== null && !isMap(doc.contents)) {
    return {
      ok: false,
      problem: "the frontmatter must be a YAML mapping of fields (key: value lines)",
      line: 2,
    };
  }
  const frontmatter = (doc.toJS() ?? {}) as Record<string, unknown>;
  const body = lines
    .slice(close + 1)
    .join("\n")
    .replace(/^\n+/, "")
    .trimEnd();
  return { ok: true, frontmatter, body };
}

/** Writes a record: frontmatter keys in the kind's order (unknown keys after), then the body. */
export function joinRecord(kind: RecordKind, frontmatter: Record<string, unknown>, body: string): string {
  const ordered: Record<string, unknown> = {};
  for (const key of FIELD_ORDER[kind]) if (frontmatter[key] !== undefined) ordered[key] = frontmatter[key];
  for (const [key, value] of Object.entries(frontmatter)) if (!(key in ordered)) ordered[key] = value;
  const yamlText = stringify(ordered, { lineWidth: 0, flowCollectionPadding: false });
  const trimmed = body.trimEnd();
  return `---\n${yamlText}---\n${trimmed === "" ? "" : `\n${trimmed}\n`}`;
}
