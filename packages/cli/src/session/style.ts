/** ANSI styling, applied only when the output is a terminal (piped output gets plain text). */
export interface Style {
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  /** Moves to the start of the line and clears it; "" when not a terminal. */
  readonly clearLine: string;
}

const ESC = "\u001b[";

export function styleFor(tty: boolean): Style {
  if (!tty) {
    const plain = (text: string) => text;
    return { dim: plain, bold: plain, red: plain, green: plain, clearLine: "" };
  }
  return {
    dim: (text) => `${ESC}2m${text}${ESC}22m`,
    bold: (text) => `${ESC}1m${text}${ESC}22m`,
    red: (text) => `${ESC}31m${text}${ESC}39m`,
    green: (text) => `${ESC}32m${text}${ESC}39m`,
    clearLine: `\r${ESC}2K`,
  };
}
