// Child process of deep-keys.test.ts: loads the manifest file argv[2] with the built package and
// prints how it went, how long it took (CPU time, and wall time for information) and the peak
// memory above the baseline, as JSON.
import { dirname } from "node:path";
import { loadManifest, ManifestError } from "../dist/index.js";

const file = process.argv[2];
const baseline = process.resourceUsage().maxRSS;
const start = performance.now();
const startCpu = process.cpuUsage();
let outcome;
try {
  await loadManifest({ file, env: { cwd: dirname(file), home: dirname(file), env: {} } });
  outcome = { loaded: true };
} catch (error) {
  outcome = {
    manifestError: ManifestError.isInstance(error),
    kind: error.kind,
    line: error.line,
    message: String(error.message).slice(0, 600),
  };
}
const ms = performance.now() - start;
const cpu = process.cpuUsage(startCpu);
const cpuMs = (cpu.user + cpu.system) / 1000;
const peakExtraMb = (process.resourceUsage().maxRSS - baseline) / 1024;
console.log(JSON.stringify({ cpuMs, ms, peakExtraMb, ...outcome }));
