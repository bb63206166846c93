import type { McpServerConfig } from "@podkit/manifest";
import { z } from "zod";
import { McpConfigError } from "./errors.js";

/**
 * One `[[mcp.server]]` as `mcpToolPackage` takes it: the manifest's fields, stdio (`command`,
 * `args`, `env`, `cwd`) or Streamable HTTP (`url`, `headers_env`). `headers_env` maps a header
 * name to the NAME of an environment variable; the value is read when the server is connected
 * and never written anywhere, so no secret has to sit in a manifest.
 */
function given(value: unknown): boolean {
  if (value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object" && value !== null) return Object.keys(value).length > 0;
  return true;
}

export const mcpServerConfigSchema = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9_-]+$/, { error: "expected a name of letters, digits, _ and -" }),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
    url: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" }).optional(),
    headers_env: z
      .record(
        z.string().min(1),
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: "expected an environment variable name" }),
      )
      .optional(),
    timeout_ms: z.number().int().positive().optional(),
    /** Defer the server's tools (docs/tools-deferred.md); applied by `loadToolPackages`. */
    defer: z.union([z.boolean(), z.literal("auto")]).optional(),
  })
  .superRefine((server, ctx) => {
    if ((server.command === undefined) === (server.url === undefined)) {
      ctx.addIssue({
        code: "custom",
        message:
          "give exactly one of `command` (a server started over stdio) and `url` (a Streamable HTTP server)",
      });
    }
    // The manifest's resolved entries carry empty `args`/`env`/`headers_env` defaults: empty is unset.
    const stdioOnly = (["args", "env", "cwd"] as const).filter((key) => given(server[key]));
    if (server.url !== undefined && stdioOnly.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `${stdioOnly.join(", ")} only apply to a stdio server (one with \`command\`); remove them or use \`command\``,
      });
    }
    if (server.command !== undefined && given(server.headers_env)) {
      ctx.addIssue({
        code: "custom",
        message:
          "`headers_env` only applies to an HTTP server (one with `url`); pass secrets to a stdio server through `env`",
      });
    }
  });

export type McpServerSpec = z.input<typeof mcpServerConfigSchema>;

// A resolved `[[mcp.server]]` entry of the manifest is always acceptable input here.
type Assignable<From extends To, To> = From;
export type ManifestServerFits = Assignable<McpServerConfig, McpServerSpec>;

/** A config that passed the checks: exactly one transport. */
export type CheckedMcpServerSpec = z.output<typeof mcpServerConfigSchema>;

/** Checks every config and that names are unique; throws `McpConfigError` naming the server and key. */
export function checkMcpServerSpecs(servers: readonly McpServerSpec[]): CheckedMcpServerSpec[] {
  const seen = new Set<string>();
  return servers.map((server, i) => {
    const label = typeof server?.name === "string" && server.name !== "" ? server.name : `mcp.server[${i}]`;
    const parsed = mcpServerConfigSchema.safeParse(server);
    if (!parsed.success) {
      const problem = parsed.error.issues
        .map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
        .join("; ");
      throw new McpConfigError({ server: label, problem });
    }
    if (seen.has(parsed.data.name)) {
      throw new McpConfigError({
        server: label,
        problem:
          "two servers share this name; tool names (mcp__<server>__<tool>) must be unique, so rename one",
      });
    }
    seen.add(parsed.data.name);
    return parsed.data;
  });
}
