import { formatKeyPath, type Provenance, type ResolvedManifest } from "@podkit/manifest";
import { multilineString, tomlKey, tomlValue } from "./toml-value.js";

type Table = Record<string, unknown>;
type Label = (keyPath: string) => string;

const COMMENT_COLUMN = 56;

/**
 * The resolved manifest as a TOML document, each value followed by a `# <layer>:<line>` comment
 * naming the layer that set it. Tables come in the order of docs/manifest.md; absent optional tables get a note.
 */
export function renderManifestText(manifest: ResolvedManifest, label: Label): string {
  const out: string[] = [];
  renderTable(manifest as unknown as Table, [], label, out);
  if (!manifest.compaction) out.push("", "# [compaction] absent: prune and compaction are off");
  if (!manifest.memory) out.push("", "# [memory] absent: memory is off");
  return out.join("\n").replace(/^\n+/, "");
}

/** `provenance` → a short label: `file:12`, `user:3`, `builtin`, `--set worker.max_turns=8`. */
export function provenanceLabel(provenance: ReadonlyMap<string, Provenance>): Label {
  return (keyPath) => {
    const source = provenance.get(keyPath);
    if (!source) return "builtin";
    if (source.note) return `${source.layer.kind} (${source.note})`;
    if (source.layer.kind === "set") return `--set ${source.layer.overlay ?? ""}`;
    return source.line === undefined ? source.layer.kind : `${source.layer.kind}:${source.line}`;
  };
}

function renderTable(table: Table, path: (string | number)[], label: Label, out: string[]): void {
  // Empty tables stay inline (`per_tool = {}`) rather than becoming a bare header.
  const scalars = Object.entries(table).filter(([, v]) => !isNonEmptyTable(v) && !isTableList(v));
  const tables = Object.entries(table).filter(([, v]) => isNonEmptyTable(v));
  const lists = Object.entries(table).filter(([, v]) => isTableList(v));
  if (path.length > 0 && (scalars.length > 0 || (tables.length === 0 && lists.length === 0))) {
    out.push("", `[${formatKeyPath(path)}]`);
  }
  for (const [key, value] of scalars) renderEntry(key, value, [...path, key], label, out);
  for (const [key, value] of tables) renderTable(value as Table, [...path, key], label, out);
  for (const [key, value] of lists) {
    (value as Table[]).forEach((item, i) => {
      out.push(
        "",
        withComment(`[[${formatKeyPath([...path, key])}]]`, label(formatKeyPath([...path, key, i]))),
      );
      for (const [k, v] of Object.entries(item)) renderEntry(k, v, [...path, key, i, k], label, out);
    });
  }
}

function renderEntry(
  key: string,
  value: unknown,
  path: (string | number)[],
  label: Label,
  out: string[],
): void {
  const where = label(formatKeyPath(path));
  const block = typeof value === "string" ? multilineString(value) : undefined;
  if (block) {
    out.push(`${tomlKey(key)} = ${block[0]}`, ...block.slice(1, -1), withComment(block.at(-1) ?? "", where));
    return;
  }
  out.push(withComment(`${tomlKey(key)} = ${tomlValue(value)}`, where));
}

function withComment(text: string, where: string): string {
  return `${text.padEnd(COMMENT_COLUMN - 1)} # ${where}`;
}

function isTable(value: unknown): value is Table {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNonEmptyTable(value: unknown): value is Table {
  return isTable(value) && Object.keys(value).length > 0;
}

function isTableList(value: unknown): value is Table[] {
  return Array.isArray(value) && value.length > 0 && value.every(isTable);
}
