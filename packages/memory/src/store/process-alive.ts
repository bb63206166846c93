/** Whether process `pid` on this host is alive (an `EPERM` answer means it is, under another user). */
export function processAlive(pid: number): boolean {
  // 0 and negative pids address process groups, never one process.
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
