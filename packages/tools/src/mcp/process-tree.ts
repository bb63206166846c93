import { readdir, readFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";

/**
 * True while a process with this pid runs. A zombie (exited, not yet reaped by its parent — in a
 * container PID 1 may never reap) counts as gone: it holds no resources and cannot be killed.
 */
export async function isAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

async function anyAlive(pids: readonly number[]): Promise<boolean> {
  return (await Promise.all(pids.map(isAlive))).some(Boolean);
}

/**
 * The pids of every descendant of `root` (children, grandchildren, …), read from /proc. A stdio
 * server started through a launcher (`npx`, a shell script) runs as a grandchild the SDK never
 * sees, so this is how closing finds it. Empty where /proc does not exist.
 */
export async function listDescendants(root: number): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return [];
  }
  const parentOf = new Map<number, number>();
  await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        try {
          const stat = await readFile(`/proc/${entry}/stat`, "utf8");
          // The command name (field 2) may hold spaces and parentheses; fields after its last ")" are fixed.
          const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
          parentOf.set(Number(entry), Number(fields[1]));
        } catch {
          // The process exited while we were reading; it needs no killing.
        }
      }),
  );
  const found: number[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const parent = frontier.pop() as number;
    for (const [pid, ppid] of parentOf) {
      if (ppid === parent && !found.includes(pid)) {
        found.push(pid);
        frontier.push(pid);
      }
    }
  }
  return found;
}

/** SIGKILLs whichever of `pids` still run and waits (without blocking) until they are gone. */
export async function killSurvivors(pids: readonly number[], waitMs = 2000): Promise<number[]> {
  const alive = await Promise.all(pids.map(isAlive));
  const survivors = pids.filter((_, i) => alive[i]);
  for (const pid of survivors) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone between the check and the kill.
    }
  }
  const deadline = Date.now() + waitMs;
  while ((await anyAlive(survivors)) && Date.now() < deadline) await delay(20);
  return survivors;
}
