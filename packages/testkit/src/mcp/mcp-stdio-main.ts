// The stdio MCP server double as a program: `node mcp-stdio-main.js '<options as JSON>'`
// (`mcpServerDoubleCommand` builds the command line).
import { serveStdioDouble } from "./mcp-stdio-double.js";

serveStdioDouble(JSON.parse(process.argv[2] ?? "{}"));
