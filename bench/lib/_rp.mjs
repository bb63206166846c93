import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ItemSchema, RequestConfigSchema } from "../../packages/llm-worker/dist/index.js";
import { FsStore, restoreSession, SessionLog } from "../../packages/session-store/dist/index.js";
import { makeEntries } from "./turn-entries.mjs";
const root = mkdtempSync(join(tmpdir(), "rp-"));
const entries = makeEntries(100_000);
const store = new FsStore({ root });
const log = await SessionLog.create(store, { systemPrompt: "x", config: { max_tokens: 1 }, history: [] });
for (let i = 0; i < entries.length; i += 1000) await log.appendMany(entries.slice(i, i + 1000));
await store.close();
const { Session } = await import("node:inspector/promises");
const session = new Session(); session.connect();
await session.post("Profiler.enable"); await session.post("Profiler.setSamplingInterval", { interval: 100 });
await session.post("Profiler.start");
for (let r = 0; r < 10; r++) {
  const s = new FsStore({ root, itemSchema: ItemSchema, configSchema: RequestConfigSchema });
  await restoreSession(s, log.sessionId);
  await s.close();
}
const { profile } = await session.post("Profiler.stop");
(await import("node:fs")).writeFileSync("/tmp/prof/restore.cpuprofile", JSON.stringify(profile));
rmSync(root, { recursive: true, force: true });
