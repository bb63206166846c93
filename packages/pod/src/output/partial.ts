import type { OutputIssue, OutputSchema } from "./output-schema.js";

// The AI SDK is loaded with the first chunk, not with the package: importing it costs several
// hundred milliseconds, and most pods never stream a typed answer.
let partialJsonParser: Promise<typeof import("ai")["parsePartialJson"]> | undefined;
function parsePartialJson(text: string): ReturnType<typeof import("ai")["parsePartialJson"]> {
  partialJsonParser ??= import("ai").then((ai) => ai.parsePartialJson);
  return partialJsonParser.then((parse) => parse(text));
}

/** An element of a top-level array property that has arrived whole, with its check. */
export interface PartialOutputElement {
  property: string;
  index: number;
  value: unknown;
  /** True when it matches the property's item schema; `issues` says why not otherwise. */
  valid: boolean;
  issues: OutputIssue[];
}

/** What one chunk of answer text added: a new partial object, elements that completed, or both. */
export interface PartialOutputUpdate {
  /** The answer as far as it has arrived, when it differs from the last one reported. */
  partial?: Record<string, unknown>;
  /** Elements of top-level array properties that completed with this chunk, in order. */
  elements: PartialOutputElement[];
}

/**
 * Follows a typed answer while it streams: fed the JSON text of the `final_answer` call's
 * arguments (or the native answer's text) chunk by chunk, it reports the partial object whenever
 * it changed (read by the AI SDK's partial-JSON parser, which closes what is still open) and each
 * element of a top-level array property once it is complete: once a `,` or the closing `]` after
 * it has arrived, so a number or string still growing is never reported. Each element is checked
 * against the property's item schema as it completes. Partial objects are for display; the
 * answer that counts is the one checked when the call is complete.
 */
export class PartialOutputTracker {
  private text = "";
  private lastPartial: string | undefined;
  private readonly scanner = new TopLevelArrayScanner();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly schema: OutputSchema<unknown>) {}

  /**
   * Adds the next chunk of answer text. Updates come back in the order of the calls (each waits
   * for the one before), undefined when the chunk changed nothing a reader can see.
   */
  push(chunk: string): Promise<PartialOutputUpdate | undefined> {
    const next = this.queue.then(() => this.step(chunk));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The text received so far. */
  get received(): string {
    return this.text;
  }

  private async step(chunk: string): Promise<PartialOutputUpdate | undefined> {
    this.text += chunk;
    const completed = this.scanner.feed(chunk);
    const { value } = await parsePartialJson(this.text);
    const update: PartialOutputUpdate = { elements: [] };
    if (isRecord(value)) {
      const shown = JSON.stringify(value);
      if (shown !== this.lastPartial) {
        this.lastPartial = shown;
        update.partial = value;
      }
      for (const { property, index } of completed) {
        const list = value[property];
        if (!Array.isArray(list) || index >= list.length) continue;
        const element: unknown = list[index];
        const checked = this.schema.validateElement(property, element);
        if (checked === undefined) continue;
        update.elements.push({
          property,
          index,
          value: element,
          valid: checked.ok,
          issues: checked.ok ? [] : checked.issues,
        });
      }
    }
    return update.partial === undefined && update.elements.length === 0 ? undefined : update;
  }
}

/**
 * Reads JSON text incrementally and reports, for each array that is the value of a property of the
 * root object, each element as it completes (a `,` or `]` at that array's own level). Strings and
 * escapes are followed so that brackets and commas inside them count for nothing. Text whose root
 * is not an object reports nothing.
 */
class TopLevelArrayScanner {
  /** Open containers, outermost first. */
  private readonly stack: ("object" | "array")[] = [];
  private inString = false;
  private escaped = false;
  /** At the root object's level: the next string is a key (after `{` or `,`), not a value. */
  private expectKey = false;
  private key: string | undefined;
  private keyText: string | undefined;
  /** The root object's array being followed: its property, elements completed, whether one has begun. */
  private array: { property: string; completed: number; started: boolean } | undefined;
  private rootSeen = false;
  private ignored = false;

  feed(chunk: string): { property: string; index: number }[] {
    const completed: { property: string; index: number }[] = [];
    for (const char of chunk) {
      if (this.ignored) break;
      if (this.inString) {
        this.readString(char);
        continue;
      }
      if (/\s/.test(char)) continue;
      if (!this.rootSeen) {
        this.rootSeen = true;
        if (char !== "{") {
          this.ignored = true;
          break;
        }
      }
      const depth = this.stack.length;
      if (this.array && depth === 2 && char !== "," && char !== "]") this.array.started = true;
      switch (char) {
        case '"':
          this.inString = true;
          if (depth === 1 && this.expectKey) this.keyText = "";
          break;
        case "{":
          this.stack.push("object");
          if (depth === 0) this.expectKey = true;
          break;
        case "[":
          this.stack.push("array");
          if (depth === 1 && this.key !== undefined)
            this.array = { property: this.key, completed: 0, started: false };
          break;
        case "}":
          this.stack.pop();
          break;
        case "]":
          if (depth === 2 && this.array) {
            if (this.array.started) completed.push(this.complete(this.array));
            this.array = undefined;
          }
          this.stack.pop();
          break;
        case ",":
          if (depth === 1) this.expectKey = true;
          else if (depth === 2 && this.array) {
            completed.push(this.complete(this.array));
            this.array.started = false;
          }
          break;
        case ":":
          if (depth === 1) this.expectKey = false;
          break;
      }
    }
    return completed;
  }

  private complete(array: { property: string; completed: number }): { property: string; index: number } {
    array.completed += 1;
    return { property: array.property, index: array.completed - 1 };
  }

  private readString(char: string): void {
    if (this.keyText !== undefined) this.keyText += char;
    if (this.escaped) {
      this.escaped = false;
      return;
    }
    if (char === "\\") {
      this.escaped = true;
      return;
    }
    if (char !== '"') return;
    this.inString = false;
    if (this.keyText !== undefined) {
      this.key = decodeKey(this.keyText.slice(0, -1));
      this.keyText = undefined;
    }
  }
}

function decodeKey(raw: string): string | undefined {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
