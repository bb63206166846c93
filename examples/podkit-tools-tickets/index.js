// An example third-party tool package for podkit. It depends only on the published
// @podkit/tools (as a peer, so the pod's copy is used) and is loaded by listing it in a
// manifest's [tools] packages; see docs/tool-packages.md.
//
//   [tools]
//   packages = ["podkit-tools-tickets"]
//   [tools.options."podkit-tools-tickets"]
//   project = "PK"               # ticket ids are shown as PK-<n>
//   file = "tickets.json"        # relative to the workspace; must be readable in the scope
import { readFile } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { definePodkitToolPackage } from "@podkit/tools";

export default definePodkitToolPackage({
  name: "podkit-tools-tickets",
  tools(ctx) {
    const project = typeof ctx.options.project === "string" ? ctx.options.project : "TICKET";
    const file = typeof ctx.options.file === "string" ? ctx.options.file : "tickets.json";
    const path = isAbsolute(file) ? file : join(ctx.workspace, file);
    // Tickets read once per pod; real packages keep connections or child processes here and
    // release them in onClose, which runs when the pod closes its tools.
    const cache = new Map();
    ctx.onClose(() => cache.clear());

    // Factories are lazy: nothing is read until the tool server materializes the tools.
    return [
      () => ({
        name: "ticket_get",
        description: `Look up a ${project} ticket by number and return its title and status.`,
        inputSchema: {
          type: "object",
          properties: { number: { type: "integer", minimum: 1, description: `The n of ${project}-<n>` } },
          required: ["number"],
          additionalProperties: false,
        },
        async execute({ number }, { signal }) {
          // A package that touches files honours the same scope as the builtin tools.
          const check = await ctx.scope.check(path, "read");
          if (!check.ok) return { summary: check.message, is_error: true };
          let tickets = cache.get(check.path);
          try {
            tickets ??= JSON.parse(await readFile(check.path, { encoding: "utf8", signal }));
            cache.set(check.path, tickets);
          } catch (error) {
            ctx.warn({
              code: "tickets.unreadable",
              message: `cannot read ${file}: ${error.message}`,
              source: "podkit-tools-tickets",
            });
            return { summary: `the ticket file ${file} cannot be read`, is_error: true };
          }
          const ticket = tickets[String(number)];
          if (!ticket) return { summary: `${project}-${number} does not exist`, is_error: true };
          return {
            summary: `${project}-${number}: ${ticket.title} [${ticket.status}]`,
            content: ticket.body ?? "",
          };
        },
      }),
    ];
  },
});
