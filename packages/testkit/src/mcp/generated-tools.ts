/** One tool as an MCP server lists it. */
export interface McpDoubleTool {
  name: string;
  description: string;
  inputSchema: {
    type: "object";
    properties: Record<string, unknown>;
    required?: string[];
    additionalProperties?: boolean;
  };
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean; destructiveHint?: boolean };
}

/** The things the generated tools act on, each with the system it lives in. */
const SUBJECTS: readonly (readonly [string, string])[] = [
  ["invoice", "billing system"],
  ["customer", "CRM"],
  ["ticket", "helpdesk"],
  ["repository", "source host"],
  ["issue", "issue tracker"],
  ["calendar_event", "team calendar"],
  ["email", "mailbox"],
  ["contact", "address book"],
  ["order", "shop"],
  ["shipment", "logistics service"],
  ["product", "catalog"],
  ["payment", "payment gateway"],
  ["report", "analytics service"],
  ["document", "document store"],
  ["folder", "file share"],
  ["user", "directory"],
  ["team", "directory"],
  ["project", "project planner"],
  ["task", "task board"],
  ["meeting", "meeting scheduler"],
];

const id = { type: "string", description: "the identifier" };

/** The actions, each with its arguments and what the server says of its effect. */
const ACTIONS: readonly {
  verb: string;
  does: (subject: string, system: string) => string;
  properties: Record<string, unknown>;
  required: string[];
  annotations?: McpDoubleTool["annotations"];
}[] = [
  {
    verb: "create",
    does: (s, sys) => `Create a new ${s} in the ${sys}.`,
    properties: { title: { type: "string" }, details: { type: "string" } },
    required: ["title"],
  },
  {
    verb: "get",
    does: (s, sys) => `Get one ${s} from the ${sys} by its identifier.`,
    properties: { id },
    required: ["id"],
    annotations: { readOnlyHint: true },
  },
  {
    verb: "list",
    does: (s, sys) => `List the ${s} records of the ${sys}, newest first.`,
    properties: { limit: { type: "integer", minimum: 1, maximum: 100 }, cursor: { type: "string" } },
    required: [],
    annotations: { readOnlyHint: true },
  },
  {
    verb: "update",
    does: (s, sys) => `Update fields of an existing ${s} in the ${sys}.`,
    properties: { id, fields: { type: "object" } },
    required: ["id", "fields"],
    annotations: { idempotentHint: true },
  },
  {
    verb: "delete",
    does: (s, sys) => `Delete a ${s} from the ${sys} for good.`,
    properties: { id },
    required: ["id"],
    annotations: { destructiveHint: true },
  },
  {
    verb: "search",
    does: (s, sys) => `Search the ${sys} for ${s} records matching a text query.`,
    properties: { query: { type: "string" } },
    required: ["query"],
    annotations: { readOnlyHint: true },
  },
  {
    verb: "archive",
    does: (s, sys) => `Archive a ${s} in the ${sys} so it no longer shows in lists.`,
    properties: { id },
    required: ["id"],
    annotations: { idempotentHint: true },
  },
  {
    verb: "export",
    does: (s, sys) => `Export the ${s} records of the ${sys} as a file.`,
    properties: { format: { type: "string", enum: ["csv", "json"] } },
    required: ["format"],
    annotations: { readOnlyHint: true },
  },
  {
    verb: "assign",
    does: (s, sys) => `Assign a ${s} in the ${sys} to a person.`,
    properties: { id, assignee: { type: "string" } },
    required: ["id", "assignee"],
    annotations: { idempotentHint: true },
  },
  {
    verb: "comment",
    does: (s, sys) => `Add a comment to a ${s} in the ${sys}.`,
    properties: { id, text: { type: "string" } },
    required: ["id", "text"],
  },
];

/**
 * `count` tools as a large MCP server would list them, the same every time: `create_invoice`,
 * `get_invoice`, … — ten actions on each of twenty subjects (200), with descriptions a search can
 * tell apart, a JSON Schema per action and MCP annotations (`get`/`list`/`search`/`export` are
 * read-only; `update`/`archive`/`assign` idempotent). Past 200 the names repeat with `_2`, `_3`, ….
 */
export function generatedTools(count: number): McpDoubleTool[] {
  const tools: McpDoubleTool[] = [];
  for (let i = 0; i < count; i++) {
    const round = Math.floor(i / (SUBJECTS.length * ACTIONS.length));
    const within = i % (SUBJECTS.length * ACTIONS.length);
    const [subject, system] = SUBJECTS[Math.floor(within / ACTIONS.length)] as readonly [string, string];
    const action = ACTIONS[within % ACTIONS.length] as (typeof ACTIONS)[number];
    const noun = subject.replace(/_/g, " ");
    tools.push({
      name: `${action.verb}_${subject}${round === 0 ? "" : `_${round + 1}`}`,
      description: action.does(noun, system),
      inputSchema: {
        type: "object",
        properties: structuredClone(action.properties),
        ...(action.required.length > 0 ? { required: [...action.required] } : {}),
        additionalProperties: false,
      },
      ...(action.annotations === undefined ? {} : { annotations: { ...action.annotations } }),
    });
  }
  return tools;
}
