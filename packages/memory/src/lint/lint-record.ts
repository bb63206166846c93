import type { z } from "zod";
import { splitRecord } from "../records/frontmatter.js";
import { type RecordKind, SUMMARY_SLUG } from "../records/layout.js";
import {
  BODY_MAX_CHARS,
  DESCRIPTION_MAX_CHARS,
  FRONTMATTER_SCHEMAS,
  MODEL_INVOCATION_ALIAS,
  SUMMARY_MAX_CHARS,
} from "../records/record-schema.js";
import { slugProblem } from "../records/slug.js";
import { MEMORY_FILE_MAX_BYTES } from "../store/contained-read.js";
import type { LintCode, LintDiagnostic } from "./diagnostics.js";

/** A record file as the linter sees it: where it is and its text. */
export interface MemoryFile {
  /** The record kind, or undefined for a file in a place no record kind lives. */
  readonly kind: RecordKind | undefined;
  readonly slug: string;
  readonly text: string;
  /** Workspace-relative path, for messages. */
  readonly path: string;
  /** Why the file was not read (a link out of `.podkit`, too large); its `text` is then empty. */
  readonly problem?: string;
  /** The line of the first byte that is not UTF-8, when the file on disk is not UTF-8 text. */
  readonly invalidUtf8Line?: number;
}

/** A record that passed the per-record checks: its validated frontmatter and body. */
export interface ParsedRecord {
  readonly kind: RecordKind;
  readonly slug: string;
  readonly path: string;
  readonly frontmatter: Record<string, unknown>;
  readonly body: string;
  readonly text: string;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when `text` holds an unpaired surrogate (the linter reports it with its line). */
export const hasLoneSurrogate = (text: string) => LONE_SURROGATE.test(text);

/**
 * What keeps a file's text from being a record at all, checked before any parsing: bytes on disk
 * that are not UTF-8, a text too large for a memory file, or an unpaired UTF-16 surrogate (a
 * string a tool call can carry that UTF-8 cannot hold: writing it would silently change it).
 */
function encodingProblem(
  file: MemoryFile,
): { code: "encoding" | "too_large"; message: string; line?: number } | undefined {
  if (file.invalidUtf8Line !== undefined) {
    return {
      code: "encoding",
      line: file.invalidUtf8Line,
      message: "the file is not UTF-8 text from this line on; memory files are UTF-8: save it as UTF-8",
    };
  }
  const bytes = Buffer.byteLength(file.text, "utf8");
  if (bytes > MEMORY_FILE_MAX_BYTES) {
    return {
      code: "too_large",
      message: `the record is ${bytes} bytes, more than the ${MEMORY_FILE_MAX_BYTES} a memory file may hold; shorten it or split it into several records`,
    };
  }
  const lone = LONE_SURROGATE.exec(file.text);
  if (lone !== null) {
    const unit = lone[0].charCodeAt(0).toString(16).toUpperCase();
    return {
      code: "encoding",
      line: file.text.slice(0, lone.index).split("\n").length,
      message: `an unpaired UTF-16 surrogate (U+${unit}) cannot be written as UTF-8; remove it or write the whole character`,
    };
  }
  return undefined;
}

/** The slugs `#slug` names in a body, outside code spans and fenced blocks; all-digit names are not slugs. */
export function bodyReferences(body: string): string[] {
  const prose = body.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  const found = new Set<string>();
  for (const match of prose.matchAll(/(?<![\w#&/])#([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?![\w-])/g)) {
    const slug = match[1] ?? "";
    if (!/^\d+$/.test(slug)) found.add(slug);
  }
  return [...found];
}

function codeOf(kind: RecordKind, issue: z.core.$ZodIssue): LintCode {
  const top = String(issue.path[0] ?? "");
  if (top === "sources" || top === "last_sources") return "sources";
  if (issue.code === "unrecognized_keys") return "field";
  if (top === "created_at" || top === "updated_at")
    return issue.code === "invalid_type" && issue.input === undefined ? "field" : "timestamp";
  if (issue.code === "invalid_value" && (top === "status" || (kind === "knowledge" && top === "kind")))
    return "enum";
  return "field";
}

function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) => (typeof part === "number" ? `[${part}]` : `${i === 0 ? "" : "."}${String(part)}`))
    .join("");
}

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}; remove ${issue.keys.length > 1 ? "them" : "it"}`;
  }
  if (issue.code === "invalid_type" && issue.input === undefined) return "required field is missing";
  return issue.message;
}

/**
 * The checks of one record on its own: location, slug, frontmatter presence, fields, enum values,
 * timestamps, sources shape, status/`replaced_by` consistency, body and description caps. Returns
 * the parsed record when nothing blocks it (warnings may remain); the old `model_invokation`
 * spelling is read as `model_invocation`.
 */
export function lintRecord(file: MemoryFile): { diagnostics: LintDiagnostic[]; record?: ParsedRecord } {
  const diagnostics: LintDiagnostic[] = [];
  const { kind, slug } = file;
  const at = (
    code: LintCode,
    message: string,
    extra: { field?: string; line?: number; severity?: "warning" } = {},
  ) =>
    diagnostics.push({
      severity: extra.severity ?? "error",
      code,
      record: file.path,
      ...(kind === undefined ? {} : { kind }),
      slug,
      ...(extra.field === undefined ? {} : { field: extra.field }),
      ...(extra.line === undefined ? {} : { line: extra.line }),
      message,
    });
  if (file.problem !== undefined) {
    at("refused", file.problem, { severity: "warning" });
    return { diagnostics };
  }
  if (kind === undefined) {
    at(
      "path",
      "not a record location: records are .md files in .podkit/memory/decisions/, .podkit/memory/requests/, .podkit/knowledge/, or .podkit/memory/summary.md",
    );
    return { diagnostics };
  }
  if (kind === "summary" && slug !== SUMMARY_SLUG) {
    at("slug", `the summary has the fixed slug "${SUMMARY_SLUG}"`);
    return { diagnostics };
  }
  const badSlug = slugProblem(slug);
  if (badSlug !== undefined) {
    at("slug", badSlug);
    return { diagnostics };
  }
  const encoding = encodingProblem(file);
  if (encoding !== undefined) {
    at(encoding.code, encoding.message, encoding.line === undefined ? {} : { line: encoding.line });
    return { diagnostics };
  }
  const split = splitRecord(file.text);
  if (!split.ok) {
    at("frontmatter", split.problem, split.line === undefined ? {} : { line: split.line });
    return { diagnostics };
  }
  for (const note of split.notes) at("encoding", note.message, { line: note.line, severity: "warning" });
  const raw = { ...split.frontmatter };
  if (kind === "knowledge" && MODEL_INVOCATION_ALIAS in raw) {
    if ("model_invocation" in raw) {
      at(
        "field",
        `both "model_invocation" and its old spelling "${MODEL_INVOCATION_ALIAS}" are set; keep only "model_invocation"`,
        {
          field: MODEL_INVOCATION_ALIAS,
        },
      );
    } else {
      at(
        "alias",
        `"${MODEL_INVOCATION_ALIAS}" is the old spelling; it is read as "model_invocation" and written that way`,
        {
          field: MODEL_INVOCATION_ALIAS,
          severity: "warning",
        },
      );
      raw.model_invocation = raw[MODEL_INVOCATION_ALIAS];
    }
    delete raw[MODEL_INVOCATION_ALIAS];
  }
  const parsed = FRONTMATTER_SCHEMAS[kind].safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = fieldPath(issue.path);
      at(codeOf(kind, issue), issueMessage(issue), field === undefined || field === "" ? {} : { field });
    }
  }
  const frontmatter = (parsed.success ? parsed.data : raw) as Record<string, unknown>;
  if (kind === "decision") {
    const status = frontmatter.status;
    const replacedBy = frontmatter.replaced_by;
    if (status === "replaced" && (replacedBy === undefined || replacedBy === "")) {
      at("status", 'status is "replaced" but replaced_by is missing; name the decision that replaces it', {
        field: "replaced_by",
      });
    } else if (status !== "replaced" && replacedBy !== undefined) {
      at(
        "status",
        `replaced_by is set but status is "${String(status)}"; set status: replaced, or remove replaced_by`,
        {
          field: "status",
        },
      );
    }
    if (typeof replacedBy === "string" && replacedBy === slug) {
      at("replaced_by", "a decision cannot be replaced by itself", { field: "replaced_by" });
    } else if (typeof replacedBy === "string" && replacedBy !== "" && slugProblem(replacedBy) !== undefined) {
      at("replaced_by", slugProblem(replacedBy) ?? "", { field: "replaced_by" });
    }
  }
  if (
    kind === "knowledge" &&
    typeof frontmatter.description === "string" &&
    frontmatter.description.length > DESCRIPTION_MAX_CHARS
  ) {
    at(
      "description_too_long",
      `description is ${frontmatter.description.length} characters, the limit is ${DESCRIPTION_MAX_CHARS}; say in one sentence what the entry is and when to use it`,
      { field: "description" },
    );
  }
  const cap = kind === "summary" ? SUMMARY_MAX_CHARS : BODY_MAX_CHARS;
  if (split.body.length > cap) {
    at(
      "body_too_long",
      `body is ${split.body.length} characters, the limit is ${cap}; compress it or split it into several records`,
      {
        field: "body",
      },
    );
  }
  const blocked = diagnostics.some((d) => d.severity === "error");
  return blocked
    ? { diagnostics }
    : {
        diagnostics,
        record: { kind, slug, path: file.path, frontmatter, body: split.body, text: file.text },
      };
}
