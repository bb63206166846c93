import type { LineFormat } from "../entry/line-frame.js";

/** Where line `index` (0-based) of a segment file starts. */
export interface LinePosition {
  index: number;
  offset: number;
}

/** A place to start reading a segment file from: a known line start and the file's format. */
export interface ReadStart extends LinePosition {
  version: LineFormat | undefined;
}

interface FilePositions {
  ino: number;
  version: LineFormat | undefined;
  /** Pairs (index, offset), ascending. */
  marks: number[];
}

const MAX_FILES = 64;
const MAX_MARKS = 128;
const FROM_START: ReadStart = { index: 0, offset: 0, version: undefined };

/**
 * Line positions this store has seen in segment files (at read chunk boundaries, at the end of
 * every read, after every append), so that reading "the entries after N" — the memory job after
 * each turn, `session show` of a live session, a resumed event stream — starts near line N
 * instead of at the top of the file. A position is trusted only for the same inode and a file at
 * least that long (FsStore replaces a file on truncate, and committed bytes never change in
 * place); a v2 reader verifies the sequence number of the first line it decodes there too, and
 * falls back to the top of the file if it does not match.
 */
export class SegmentPositions {
  private readonly files = new Map<string, FilePositions>();

  /** The best place to start reading `path` for line `from`, given the file as opened now. */
  start(path: string, ino: number, size: number, from: number, forReading: boolean): ReadStart {
    const known = this.files.get(path);
    if (known === undefined) return FROM_START;
    if (known.ino !== ino) {
      this.files.delete(path);
      return FROM_START;
    }
    // Without sequence numbers (v1) a position cannot be verified when reading from it.
    if (forReading && known.version !== 2) return FROM_START;
    const marks = known.marks;
    for (let i = marks.length - 2; i >= 0; i -= 2) {
      const index = marks[i] as number;
      const offset = marks[i + 1] as number;
      if (index <= from && offset <= size) return { index, offset, version: known.version };
    }
    return FROM_START;
  }

  /** Records that line `index` of `path` (inode `ino`) starts at `offset`. */
  record(path: string, ino: number, version: LineFormat | undefined, index: number, offset: number): void {
    let known = this.files.get(path);
    if (known === undefined || known.ino !== ino) {
      if (known === undefined && this.files.size >= MAX_FILES) {
        this.files.delete(this.files.keys().next().value as string);
      }
      known = { ino, version, marks: [] };
      this.files.set(path, known);
    }
    if (version !== undefined) known.version = version;
    const marks = known.marks;
    const last = marks.length - 2;
    if (last >= 0 && (marks[last] as number) === index) return;
    if (last < 0 || (marks[last] as number) < index) {
      marks.push(index, offset);
    } else {
      let at = 0;
      while (at < marks.length && (marks[at] as number) < index) at += 2;
      if ((marks[at] as number) === index) return;
      marks.splice(at, 0, index, offset);
    }
    if (marks.length > MAX_MARKS * 2) thin(marks);
  }

  /** Forgets `path` (its file was replaced, or a position proved wrong). */
  drop(path: string): void {
    this.files.delete(path);
  }

  clear(): void {
    this.files.clear();
  }
}

/** Keeps every other mark, and always the last (the end of the file as last seen). */
function thin(marks: number[]): void {
  const kept: number[] = [];
  for (let i = 0; i < marks.length; i += 4) kept.push(marks[i] as number, marks[i + 1] as number);
  const lastIndex = marks[marks.length - 2] as number;
  if (kept[kept.length - 2] !== lastIndex) kept.push(lastIndex, marks[marks.length - 1] as number);
  marks.length = 0;
  marks.push(...kept);
}
