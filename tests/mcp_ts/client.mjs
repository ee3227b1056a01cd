// The official TypeScript MCP SDK's client, driven by a list of steps: what the MCP Inspector and the
// desktop apps do with a server. tests/test_mcp_clients.py runs it against `python agent.py mcp`.
//
//   node client.mjs STEPS_JSON COMMAND ARG...
//
// STEPS_JSON is a list of steps: {"list": "tools"|"resources"|"prompts"}, {"call": NAME, "args": {...}},
// {"read": URI}, {"prompt": NAME}, {"subscribe": URI}. Each step's outcome is printed as one line of JSON
// on stdout: {"ok": RESULT} for what the SDK handed back, {"thrown": MESSAGE} for what it raised (a
// result it refused, such as structured content that does not match the tool's output schema).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [steps, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "planner-tests", version: "1.0.0" }, { capabilities: {} });

async function run(step) {
  if (step.list === "tools") return client.listTools();
  if (step.list === "resources") return client.listResources();
  if (step.list === "prompts") return client.listPrompts();
  if (step.call) return client.callTool({ name: step.call, arguments: step.args ?? {} });
  if (step.read) return client.readResource({ uri: step.read });
  if (step.prompt) return client.getPrompt({ name: step.prompt });
  if (step.subscribe) return client.subscribeResource({ uri: step.subscribe });
  throw new Error(`unknown step ${JSON.stringify(step)}`);
}

await client.connect(transport);
process.stdout.write(JSON.stringify({ ok: { server: client.getServerVersion() } }) + "\n");
for (const step of JSON.parse(steps)) {
  try {
    process.stdout.write(JSON.stringify({ ok: await run(step) }) + "\n");
  } catch (e) {
    process.stdout.write(JSON.stringify({ thrown: String(e?.message ?? e) }) + "\n");
  }
}
await client.close();
