import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION, MANIFEST_OPTIONS } from "./shared-options.js";

/** `podkit store gc [--dry-run]` */
export const storeGc: CommandSpec = {
  path: ["store", "gc"],
  summary: "remove the session store's blobs no session names, stored more than an hour ago",
  usage: "store gc [--dry-run] [--json] [--manifest <file>]",
  details: [
    "Blobs are the file contents (and later media) sessions name by digest (docs/rewind.md). A blob",
    "is kept while any entry of any session holds its digest, and for an hour after it was last",
    "stored whatever names it, so a pod writing at the same time never loses one. The store is the",
    "one the manifest's [session] table selects. A session that cannot be read to its end stops the",
    "collection before anything is removed.",
  ].join("\n"),
  options: {
    "dry-run": { type: "boolean", help: "print what would be removed, remove nothing" },
    ...JSON_OPTION,
    ...MANIFEST_OPTIONS,
  },
  run: lazyRun(async () => ({ run: (await import("../actions/store.js")).gc })),
};
