/**
 * A value in TOML syntax, for display. Strings use JSON escapes (valid TOML basic strings);
 * multi-line strings are rendered by `multilineString`.
 */
export function tomlValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`);
    return entries.length === 0 ? "{}" : `{ ${entries.join(", ")} }`;
  }
  return JSON.stringify(String(value));
}

/** A key, quoted when it is not a bare TOML key. */
export function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

/**
 * A multi-line string as a TOML literal block (`'''` … `'''`, no escapes, shown as written),
 * or `undefined` when the text cannot be written that way and needs a one-line basic string.
 */
export function multilineString(text: string): string[] | undefined {
  if (!text.includes("\n") || text.includes("'''") || hasControlCharacter(text)) return undefined;
  return `'''\n${text}'''`.split("\n");
}

/** Literal strings cannot hold control characters other than tab and newline. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a) || code === 0x7f) return true;
  }
  return false;
}
