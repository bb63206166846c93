/**
 * Keys that earlier drafts of the manifest (and the reference implementation) spelled
 * differently. A layer that still uses one gets "renamed: use X instead" rather than a bare
 * "unknown key". Paths are written without list indices. Documented in docs/manifest.md.
 */
export const RENAMED_KEYS: Readonly<Record<string, { use: string; note?: string }>> = {
  "pod.prompts": { use: "pod.prompt_pack" },
  "model.name": { use: "model.ref", note: 'write "<provider>/<model id>"' },
  "model.provider": {
    use: "model.ref",
    note: 'the provider is the part of "<provider>/<model id>" before the slash',
  },
  "model.api_key": {
    use: "model.api_key_env",
    note: "name the environment variable that holds the key; keys never go into manifests",
  },
  "worker.system": { use: "worker.system_prompt" },
  "worker.prompt": { use: "worker.system_prompt" },
  "worker.model": { use: "model.ref", note: "the model moved to the [model] table" },
  "worker.max_steps": { use: "worker.max_turns" },
  "worker.max_output_tokens": { use: "worker.max_tokens" },
  "worker.tool_output.max_bytes": { use: "worker.tool_output.default_max_bytes" },
  "scope.rules": { use: "scope.allow", note: "write [[scope.allow]] and [[scope.deny]] tables" },
  "scope.allow.path": { use: "scope.allow.target" },
  "scope.deny.path": { use: "scope.deny.target" },
  "scope.allow.access": { use: "scope.allow.permission" },
  "scope.deny.access": { use: "scope.deny.permission" },
  "compaction.retain_tokens": { use: "compaction.retained_tokens" },
  "session.url": {
    use: "session.url_env",
    note: "name the environment variable that holds the connection URL; a URL (and its password) never goes into a manifest",
  },
  "session.database_url": {
    use: "session.url_env",
    note: "name the environment variable that holds the connection URL; a URL (and its password) never goes into a manifest",
  },
  "session.backend": { use: "session.store" },
  "mcp.servers": { use: "mcp.server", note: "write one [[mcp.server]] table per server" },
};
