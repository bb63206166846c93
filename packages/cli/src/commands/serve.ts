import { type CommandSpec, lazyRun } from "./command.js";
import { MANIFEST_OPTIONS } from "./shared-options.js";

/** `podkit serve` */
export const serve: CommandSpec = {
  path: ["serve"],
  summary: "serve the workspace's pods over HTTP: an API, resumable event streams, a session viewer",
  usage:
    "serve [--host <address>] [--port <n>] [--tokens-file <file>] [--cors-origin <origin>]... [--yes] [--manifest <file>]",
  details: [
    "Starts an HTTP server for the sessions of the manifest's store (the workspace's files, or",
    'PostgreSQL with [session] store = "postgres"): POST /sessions starts a run, GET',
    "/sessions/<id>/events streams a session's log as Server-Sent Events that resume with",
    "Last-Event-ID, POST /chat speaks the AI SDK's UI message stream (useChat), and / is a",
    "session viewer. On a loopback address (127.0.0.0/8, ::1, localhost) no token is needed; on any",
    "other the server refuses to start unless PODKIT_SERVE_TOKEN is set or --tokens-file names",
    "holders, and then requires `Authorization: Bearer <token>`. An approval is credited to the",
    "holder of the token it came with, never to the server's OS user. bash (and write calls with",
    "[tools] confirm_writes) stay pending unless --yes is given: the run ends awaiting approval, and",
    "the call is answered at POST /sessions/<id>/approvals/<call>, in the viewer or with `podkit",
    "approve`. Ctrl-C stops the server (runs in progress are interrupted). See docs/serve.md.",
  ].join("\n"),
  options: {
    host: { type: "string", valueName: "address", help: "the address to listen on (default 127.0.0.1)" },
    port: { type: "string", valueName: "n", help: "the port (default 4111; 0 picks a free one)" },
    "tokens-file": {
      type: "string",
      valueName: "file",
      help: 'tokens that name their holders, one "<name> <token>" a line (or PODKIT_SERVE_TOKENS_FILE)',
    },
    "cors-origin": {
      type: "string",
      multiple: true,
      valueName: "origin",
      help: "let a web app at this origin call the API from a browser (CORS); repeatable",
    },
    yes: { type: "boolean", short: "y", help: "approve every bash and write call without asking" },
    ...MANIFEST_OPTIONS,
  },
  run: lazyRun(() => import("../actions/serve.js")),
};
