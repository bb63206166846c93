import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { z } from "zod";
import type { MemoryPaths } from "../records/layout.js";
import { withContainedDir, withExistingDir } from "../store/contained-dir.js";
import { processAlive } from "../store/process-alive.js";

/**
 * `_staging/.open-<session>.json`: a pod with memory has this session open (its pid and host).
 * A pod that closes removes it; one that dies leaves it, and the next pod to open the session
 * finds it with a dead pid: the session's tail was never extracted at close, so its first pass
 * extracts it whatever its size.
 */
const OpenSessionSchema = z.object({ session_id: z.string(), pid: z.int(), host: z.string() });

const markName = (sessionId: string) =>
  `.open-${createHash("sha256").update(sessionId).digest("hex").slice(0, 24)}.json`;

/** True when a process on this host had the session open and died without closing it. */
export async function leftByDeadProcess(paths: MemoryPaths, sessionId: string): Promise<boolean> {
  const bytes = await withExistingDir(paths.workspace, paths.stagingDir, (dir) =>
    dir.read(markName(sessionId), 4096),
  );
  if (bytes === undefined) return false;
  try {
    const mark = OpenSessionSchema.parse(JSON.parse(bytes.toString("utf8")));
    // Another host's process cannot be checked: it is taken as alive.
    return (
      mark.session_id === sessionId &&
      mark.host === hostname() &&
      mark.pid !== process.pid &&
      !processAlive(mark.pid)
    );
  } catch {
    return false;
  }
}

/** Marks the session open by this process. */
export async function markSessionOpen(paths: MemoryPaths, sessionId: string): Promise<void> {
  const mark = { session_id: sessionId, pid: process.pid, host: hostname() };
  await withContainedDir(paths.workspace, paths.stagingDir, (dir) =>
    dir.writeAtomic(markName(sessionId), JSON.stringify(mark)),
  );
}

/** Removes this process's mark: the session was closed. */
export async function clearSessionMark(paths: MemoryPaths, sessionId: string): Promise<void> {
  await withExistingDir(paths.workspace, paths.stagingDir, (dir) => dir.remove(markName(sessionId)));
}
