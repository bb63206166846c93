import type { TextSink } from "../io.js";
import { styleFor } from "../session/style.js";

/** The demo's voice: numbered step headings, a few lines of explanation, what the user typed. */
export class Narrator {
  private readonly style;
  private step = 0;

  constructor(
    private readonly out: TextSink,
    private readonly steps: number,
  ) {
    this.style = styleFor(out.isTTY === true);
  }

  heading(title: string, ...explanation: string[]): void {
    this.step += 1;
    this.out.write(`\n${this.style.bold(`[${this.step}/${this.steps}] ${title}`)}\n`);
    for (const line of explanation) this.out.write(`${this.style.dim(line)}\n`);
  }

  /** A line of explanation (dimmed in a terminal). */
  say(line: string): void {
    this.out.write(`${this.style.dim(line)}\n`);
  }

  /** A plain line (a fact the demo found, a path). */
  show(line: string): void {
    this.out.write(`${line}\n`);
  }

  user(text: string): void {
    this.out.write(`${this.style.bold("you›")} ${text}\n`);
  }
}
