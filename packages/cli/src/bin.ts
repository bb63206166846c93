#!/usr/bin/env node
import { main } from "./main.js";

// A reader that goes away (`podkit run --json | head`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

// The only place that touches the real process: everything else receives it through `io`.
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  // A getter: creating process.stdin costs start-up time that --version should not pay.
  get stdin() {
    return process.stdin;
  },
  onInterrupt: (handler) => {
    process.on("SIGINT", handler);
    return () => process.off("SIGINT", handler);
  },
  onTerminate: (handler) => {
    process.on("SIGTERM", handler);
    return () => process.off("SIGTERM", handler);
  },
});
process.exitCode = code;
