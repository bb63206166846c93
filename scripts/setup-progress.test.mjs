// Set-up shows progress instead of minutes of silence: the readers summarise pnpm's and turbo's
// real output (recorded below), and a quiet phase gets a heartbeat line off a terminal and a
// redrawn status line on one.
import { describe, expect, it } from "vitest";
import { buildReader, createProgress, installReader } from "./setup-progress.mjs";

// `pnpm install --frozen-lockfile --reporter=append-only` on a fresh clone (abridged).
const FRESH_INSTALL = `Scope: all 15 workspace projects
Lockfile is up to date, resolution step is skipped
Progress: resolved 1, reused 0, downloaded 0, added 0
Packages: +321
++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++
Progress: resolved 321, reused 0, downloaded 120, added 97
packages/cli/node_modules/node-pty install$ node-gyp rebuild
Progress: resolved 321, reused 0, downloaded 321, added 321, done
Done in 41.2s using pnpm v12.4.2`;

const UP_TO_DATE_INSTALL = `Scope: all 15 workspace projects
Lockfile is up to date, resolution step is skipped
Already up to date
Done in 522ms using pnpm v12.4.2`;

// `turbo run build --output-logs=new-only --log-order=grouped` with two packages to build.
const BUILD = `   • turbo 2.11.11
   • Running build in 14 packages

@podkit/manifest:build: cache hit, replaying logs 139c5de1a420759a
@podkit/session-store:build: cache miss, executing fcf4ac1a01c936e0
@podkit/session-store:build: $ tsc -b
@podkit/cli:build: cache bypass, force executing c6b7c4b8f013a0b6
@podkit/cli:build: $ tsc -b && node scripts/copy-demo-workspace.mjs

 Tasks:    3 successful, 3 total
Cached:    1 cached, 3 total`;

function feed(reader, text) {
  return text.split("\n").map((line) => reader.onLine(line));
}

/** A stream, clock and timers under the test's control. */
function harness(isTTY) {
  const writes = [];
  let now = 0;
  let tick = null;
  const progress = createProgress({
    prefix: "setup",
    stream: { write: (text) => writes.push(text) },
    isTTY,
    heartbeatMs: 15_000,
    clock: () => now,
    timers: {
      setInterval: (fn) => {
        tick = fn;
        return 1;
      },
      clearInterval: () => {
        tick = null;
      },
    },
  });
  const advance = (ms) => {
    for (let t = 0; t < ms; t += 1000) {
      now += 1000;
      tick?.();
    }
  };
  return { progress, writes, advance };
}

describe("setup progress", () => {
  it("summarises a fresh install, showing the native build while it runs", () => {
    const reader = installReader();
    const statuses = [];
    for (const line of FRESH_INSTALL.split("\n")) {
      reader.onLine(line);
      statuses.push(reader.status());
    }
    expect(statuses).toContain("resolved 321, downloaded 120, added 97");
    expect(statuses).toContain("running node-pty's install script");
    expect(reader.summary()).toBe("dependencies installed: +321 packages");
  });

  it("says an install that changed nothing is up to date", () => {
    const reader = installReader();
    feed(reader, UP_TO_DATE_INSTALL);
    expect(reader.summary()).toBe("dependencies up to date");
  });

  it("names each package turbo built and counts the ones it replayed", () => {
    const reader = buildReader(3);
    expect(feed(reader, BUILD).filter(Boolean)).toEqual(["@podkit/session-store", "@podkit/cli"]);
    expect(reader.status()).toBe("3 of 3 packages done");
    expect(reader.summary()).toBe("built 2 packages, 1 from turbo's cache");
    const cached = buildReader(1);
    feed(cached, "@podkit/manifest:build: cache hit, suppressing logs 139c5de1a420759a");
    expect(cached.summary()).toBe("build up to date: 1 package from turbo's cache");
  });

  it("off a terminal, a quiet phase prints a heartbeat every 15 s of silence, never more often", () => {
    const { progress, writes, advance } = harness(false);
    progress.line("building the packages…");
    const phase = progress.phase("building", () => "4 of 12 packages done");
    advance(14_000);
    expect(writes).toEqual(["setup: building the packages…\n"]);
    advance(1_000);
    expect(writes.at(-1)).toBe("setup: still building (15 s; 4 of 12 packages done)…\n");
    advance(10_000);
    progress.line("  built @podkit/pod (5 of 12, 25.0 s)");
    advance(14_000);
    expect(writes.filter((text) => text.includes("still"))).toHaveLength(1);
    advance(1_000);
    expect(writes.at(-1)).toBe("setup: still building (40 s; 4 of 12 packages done)…\n");
    expect(phase.end()).toBe("40.0 s");
    advance(60_000);
    expect(writes.filter((text) => text.includes("still"))).toHaveLength(2);
  });

  it("on a terminal, redraws one status line and clears it before the next line", () => {
    const { progress, writes, advance } = harness(true);
    const phase = progress.phase("installing the locked dependencies", () => "resolved 300");
    advance(2_000);
    expect(writes).toEqual([
      "\r\x1b[Ksetup: installing the locked dependencies… 1 s (resolved 300)",
      "\r\x1b[Ksetup: installing the locked dependencies… 2 s (resolved 300)",
    ]);
    phase.end();
    progress.line("dependencies installed: +321 packages (2.0 s)");
    expect(writes.slice(2)).toEqual(["\r\x1b[K", "setup: dependencies installed: +321 packages (2.0 s)\n"]);
  });
});
