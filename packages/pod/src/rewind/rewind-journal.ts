import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { link, mkdir, open, readdir, readFile, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { isBlobDigest } from "@podkit/session-store";
import { z } from "zod";
import { PodUsageError } from "../errors.js";
import { RewindJournalError } from "./errors.js";
import { codeOf, syncDirectories, unsafePathReason } from "./workspace-files.js";

/**
 * The journal of one rewind, written (whole, synced) before anything in the workspace changes
 * and removed when everything is done. The rewind commits when its claim entry lands in the log:
 * a rerun that finds the journal finishes the rewind when the log holds the claim, and undoes it
 * (removes what was staged) when it does not — nothing but staged files exists before the claim.
 */
export interface RewindJournal {
  version: 1;
  rewindId: string;
  sessionId: string;
  toTurn: number;
  /** The process that wrote it, so a second rewind can tell a running one from a dead one. */
  pid: number;
  host: string;
  /** The claim: `entry` appended at `index` of segment `segmentId`, only if nobody else wrote. */
  claim: { segmentId: string; index: number; entry: ClaimEntry };
  /** The new head segment, when the conversation is rewound, and what it starts with. */
  fork: ForkPlan | null;
  /** Every change to the workspace, in the order they are made (deletions first). */
  operations: JournalOperation[];
  /** Directories created for staged files (outermost first), removed again on undo when empty. */
  createdDirs: string[];
}

export interface ClaimEntry {
  kind: "extension";
  ts: number;
  domain: string;
  payload: unknown;
}

export interface ForkPlan {
  sourceSegmentId: string;
  atTurn: number;
  segmentId: string;
  /** Extension entries the new segment starts with (stamped when written). */
  carried: { domain: string; payload: unknown }[];
}

export interface JournalOperation {
  path: string;
  action: "write" | "delete";
  /** What stood there when the rewind looked: a digest, `null` (absent) or what else it was. */
  from: string | null;
  /** The content it ends with (`null`: removed). */
  to: string | null;
  /** The staged file holding `to`, next to the target (workspace-relative). */
  temp: string | null;
  /** The mode of the file it replaces, kept; `null`: a new file. */
  mode: number | null;
}

const Digest = z.string().refine(isBlobDigest).nullable();
const RelativePath = z
  .string()
  .refine((path) => unsafePathReason(path) === undefined, "not a workspace path");

const JournalSchema = z.strictObject({
  version: z.literal(1),
  rewindId: z.string().regex(/^[0-9a-f]{16}$/),
  sessionId: z.string().min(1),
  toTurn: z.int().min(0),
  pid: z.int(),
  host: z.string(),
  claim: z.strictObject({
    segmentId: z.string().min(1),
    index: z.int().min(1),
    entry: z.strictObject({
      kind: z.literal("extension"),
      ts: z.number(),
      domain: z.string(),
      payload: z.unknown(),
    }),
  }),
  fork: z
    .strictObject({
      sourceSegmentId: z.string().min(1),
      atTurn: z.int().min(0),
      segmentId: z.string().min(1),
      carried: z.array(z.strictObject({ domain: z.string(), payload: z.unknown() })),
    })
    .nullable(),
  operations: z.array(
    z.strictObject({
      path: RelativePath,
      action: z.enum(["write", "delete"]),
      from: z.union([Digest, z.enum(["symlink", "directory", "other"])]),
      to: Digest,
      temp: RelativePath.nullable(),
      mode: z.int().min(0).max(0o7777).nullable(),
    }),
  ),
  createdDirs: z.array(RelativePath),
});

const SAFE_SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** `<workspace>/.podkit/rewind/<session>.journal.json` */
export function journalPath(root: string, sessionId: string): string {
  if (!SAFE_SESSION_ID.test(sessionId)) {
    throw new PodUsageError(`invalid session id ${JSON.stringify(sessionId.slice(0, 80))}`, {
      hint: "`podkit session list` shows the workspace's sessions",
    });
  }
  return join(root, ".podkit", "rewind", `${sessionId}.journal.json`);
}

/** A fresh rewind id (also the mark of its staged files). */
export function newRewindId(): string {
  return randomBytes(8).toString("hex");
}

/** The journal's identity of this process. */
export function currentProcess(): { pid: number; host: string } {
  return { pid: process.pid, host: hostname() };
}

/**
 * Writes `journal` as the session's journal, whole and synced, only if there is none: a temp file
 * is synced, then linked to the journal's name (which fails when it exists), then removed.
 * Returns false when a journal was there.
 */
export async function createJournal(root: string, journal: RewindJournal): Promise<boolean> {
  const path = journalPath(root, journal.sessionId);
  const dir = join(root, ".podkit", "rewind");
  await mkdir(dir, { recursive: true });
  const temp = `${path}.${journal.pid}.${journal.rewindId}.tmp`;
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
  try {
    await handle.writeFile(`${JSON.stringify(journal, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, path);
  } catch (error) {
    if (codeOf(error) === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  await syncDirectories(dir, [""]);
  return true;
}

/** The session's journal, or undefined when there is none; a damaged one is `RewindJournalError`. */
export async function readJournal(root: string, sessionId: string): Promise<RewindJournal | undefined> {
  const path = journalPath(root, sessionId);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (codeOf(error) === "ENOENT") return undefined;
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new RewindJournalError(path, "it is not JSON", { cause: error });
  }
  const parsed = JournalSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RewindJournalError(path, `${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"}`);
  }
  if (parsed.data.sessionId !== sessionId)
    throw new RewindJournalError(path, `it is the journal of session ${parsed.data.sessionId}`);
  for (const operation of parsed.data.operations) {
    if (operation.temp !== null && !operation.temp.includes(stagedMark(parsed.data.rewindId)))
      throw new RewindJournalError(path, `${operation.temp} is not a file this rewind staged`);
  }
  return parsed.data as RewindJournal;
}

/**
 * Removes the temp files of journals whose writer died before publishing them (their name holds
 * its pid): such a rewind never began. A live writer's temp is left alone.
 */
export async function removeDeadJournalTemps(
  root: string,
  sessionId: string,
  isAlive: (pid: number) => boolean,
): Promise<void> {
  const dir = join(root, ".podkit", "rewind");
  const prefix = `${sessionId}.journal.json.`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (codeOf(error) === "ENOENT") return;
    throw error;
  }
  for (const name of names) {
    const pid = /^(\d+)\.[0-9a-f]{16}\.tmp$/.exec(name.slice(prefix.length))?.[1];
    if (!name.startsWith(prefix) || pid === undefined) continue;
    if (Number(pid) !== process.pid && isAlive(Number(pid))) continue;
    await unlink(join(dir, name)).catch(() => undefined);
  }
}

/** Removes the session's journal and syncs its directory: the rewind is over. */
export async function removeJournal(root: string, sessionId: string): Promise<void> {
  await unlink(journalPath(root, sessionId)).catch((error) => {
    if (codeOf(error) !== "ENOENT") throw error;
  });
  await syncDirectories(join(root, ".podkit", "rewind"), [""]);
}

/** What a rewind's staged files carry in their names. */
function stagedMark(rewindId: string): string {
  return `.podkit-rewind-${rewindId}-`;
}

/** The staged file for operation `index` of rewind `rewindId`, next to `path`. */
export function stagedPath(path: string, rewindId: string, index: number): string {
  const slash = path.lastIndexOf("/");
  return `${slash === -1 ? "" : path.slice(0, slash + 1)}${stagedMark(rewindId)}${index}.tmp`;
}
