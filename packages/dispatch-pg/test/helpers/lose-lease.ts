import { PgBoss } from "pg-boss";
import { queueOf } from "../../src/job-data.js";

/**
 * What pg-boss's supervisor does to a run whose heartbeat lapsed while its worker was paused (a GC
 * pause, a swapped-out VM, SIGSTOP): it fails that attempt, so the run is retried. The worker's
 * process lives on and finds its claim gone. Done here at once, instead of after the heartbeat.
 */
export async function loseLease(url: string, schema: string, pod: string, runId: string): Promise<void> {
  const boss = new PgBoss({ connectionString: url, schema, supervise: false, schedule: false });
  await boss.start();
  try {
    await boss.fail(queueOf(pod), runId, { error: { message: "job heartbeat timeout" } });
  } finally {
    await boss.stop({ graceful: false });
  }
}
