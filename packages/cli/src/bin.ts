#!/usr/bin/env node
import { main } from "./main.js";

// The only place that touches the real process: everything else receives it through `io`.
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});
process.exitCode = code;
