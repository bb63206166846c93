// What scripts/setup.mjs shows while pnpm installs and turbo builds, instead of minutes of
// silence: a line per phase with its time, a line per package actually built, and, while a phase
// is quiet, a status line redrawn in place in a terminal or a "still …" heartbeat line elsewhere
// (CI logs, pipes). The tools' own output is read, summarised, and shown in full only when a
// phase fails. Pure parts (the two readers) are tested with recorded output.

const packages = (n) => `${n} ${n === 1 ? "package" : "packages"}`;

/** Seconds since `start` (ms), "12.3 s". */
export function elapsed(start, now = Date.now()) {
  return `${((now - start) / 1000).toFixed(1)} s`;
}

/**
 * Reads `pnpm install --reporter=append-only` output a line at a time. `status()` is the latest
 * progress ("resolved 300, downloaded 120, added 280", or the package whose install script runs);
 * `summary()` the closing words ("dependencies up to date", "dependencies installed: +321 packages").
 */
export function installReader() {
  let status = "";
  let added = null;
  let upToDate = false;
  return {
    onLine(line) {
      const progress = /Progress: resolved (\d+), reused (\d+), downloaded (\d+), added (\d+)/.exec(line);
      if (progress) status = `resolved ${progress[1]}, downloaded ${progress[3]}, added ${progress[4]}`;
      const packages = /^Packages: ([+-]\d+)/.exec(line.trim());
      if (packages) added = packages[1];
      if (/Already up to date/.test(line)) upToDate = true;
      // ".../node_modules/node-pty install$ node-gyp rebuild": a native build, the slow part.
      const script = /node_modules\/((?:@[^/\s]+\/)?[^/\s]+) (?:pre|post)?install\$/.exec(line);
      if (script) status = `running ${script[1]}'s install script`;
    },
    status: () => status,
    summary: () =>
      added === null || upToDate ? "dependencies up to date" : `dependencies installed: ${added} packages`,
  };
}

/**
 * Reads `turbo run build --output-logs=new-only --log-order=grouped` output a line at a time:
 * grouped output prints a task's block when the task ends, so its first line
 * ("@podkit/pod:build: cache miss, executing …") says one package is done. `onLine` returns the
 * name of a package that was just built (not replayed from the cache), else null.
 */
export function buildReader(total) {
  let done = 0;
  let built = 0;
  return {
    onLine(line) {
      const task = /^(\S+):build: cache (hit|miss|bypass)/.exec(line.trim());
      if (!task) return null;
      done += 1;
      if (task[2] === "hit") return null;
      built += 1;
      return task[1];
    },
    status: () => `${done} of ${total} packages done`,
    progress: () => `${done} of ${total}`,
    summary: () =>
      built === 0
        ? `build up to date: ${packages(done)} from turbo's cache`
        : `built ${packages(built)}, ${done - built} from turbo's cache`,
  };
}

/**
 * Progress lines on `stream`, each prefixed. `phase(label)` starts a timed phase: in a terminal
 * its status line is redrawn every second; elsewhere a "still <label> (N s; status)…" line
 * appears after `heartbeatMs` without other output. `clock` and `timers` are injectable for tests.
 */
export function createProgress({
  prefix,
  stream = process.stderr,
  isTTY = Boolean(stream.isTTY),
  heartbeatMs = 15_000,
  clock = Date.now,
  timers = { setInterval, clearInterval },
} = {}) {
  let statusShown = false;
  let lastOutput = clock();
  const clearStatus = () => {
    if (statusShown) stream.write("\r\x1b[K");
    statusShown = false;
  };
  const line = (text) => {
    clearStatus();
    stream.write(`${prefix}: ${text}\n`);
    lastOutput = clock();
  };
  const phase = (label, status = () => "") => {
    const start = clock();
    const tick = () => {
      const now = clock();
      const detail = status();
      const seconds = Math.round((now - start) / 1000);
      if (isTTY) {
        stream.write(`\r\x1b[K${prefix}: ${label}… ${seconds} s${detail ? ` (${detail})` : ""}`);
        statusShown = true;
      } else if (now - lastOutput >= heartbeatMs) {
        line(`still ${label} (${seconds} s${detail ? `; ${detail}` : ""})…`);
      }
    };
    const timer = timers.setInterval(tick, isTTY ? 1000 : Math.min(heartbeatMs, 5000));
    timer.unref?.();
    return {
      start,
      tick,
      end: () => {
        timers.clearInterval(timer);
        clearStatus();
        return elapsed(start, clock());
      },
    };
  };
  return { line, phase };
}
