import type { LineMatcher } from "./line-matcher.js";
import { cutLine, splitLines } from "./text.js";

/** One line of grep output. */
export interface OutputLine {
  text: string;
  /** A matching line (not context or a separator); the limit counts these. */
  match: boolean;
}

/** Takes one output line; false once the search must stop (the limit or the output budget). */
export type LineSink = (line: OutputLine) => boolean;

/** Longest line shown; longer ones are cut with a marker. */
const MAX_SHOWN_LINE = 300;

/**
 * One file's output, rg/grep style, fed its lines in order (the whole file at once, or chunk by
 * chunk): `path:line:text` for matches, `path-line-text` for up to `context` lines around them,
 * `--` between groups that do not touch. Keeps only the last `context` unprinted lines.
 */
export class MatchLines {
  /** Lines consumed so far (the next line's number is this plus one). */
  private consumed = 0;
  private lastPrinted = 0;
  private afterLeft = 0;
  private readonly before: { no: number; text: string }[] = [];
  /** Output lines this file produced. */
  emitted = 0;
  private shown: string | undefined;

  constructor(
    /** The file's name as shown, asked for only once it has output (most files have none). */
    private readonly showName: () => string,
    private readonly matcher: LineMatcher,
    private readonly context: number,
    private readonly sink: LineSink,
  ) {}

  /** Feeds the lines of `text` (complete lines; a final one may lack its newline). False once the sink refused. */
  text(text: string): boolean {
    for (const line of splitLines(text)) {
      const no = ++this.consumed;
      if (this.matcher.test(line)) {
        const from = this.before[0]?.no ?? no;
        if (
          this.context > 0 &&
          this.lastPrinted > 0 &&
          from > this.lastPrinted + 1 &&
          !this.emit("--", false)
        )
          return false;
        for (const held of this.before.splice(0))
          if (!this.emit(this.contextLine(held.no, held.text), false)) return false;
        if (!this.emit(`${this.name()}:${no}:${cutLine(line, MAX_SHOWN_LINE)}`, true)) return false;
        this.lastPrinted = no;
        this.afterLeft = this.context;
      } else if (this.afterLeft > 0) {
        if (!this.emit(this.contextLine(no, line), false)) return false;
        this.lastPrinted = no;
        this.afterLeft--;
      } else if (this.context > 0) {
        this.before.push({ no, text: line });
        if (this.before.length > this.context) this.before.shift();
      }
    }
    return true;
  }

  /** Whether lines around matches are shown (then no line may be passed over unread). */
  get showsContext(): boolean {
    return this.context > 0;
  }

  /** Passes over `count` lines known to hold no match; only when no context is shown. */
  skip(count: number): void {
    this.consumed += count;
  }

  private contextLine(no: number, line: string): string {
    return `${this.name()}-${no}-${cutLine(line, MAX_SHOWN_LINE)}`;
  }

  private name(): string {
    this.shown ??= this.showName();
    return this.shown;
  }

  private emit(text: string, match: boolean): boolean {
    this.emitted++;
    return this.sink({ text, match });
  }
}
