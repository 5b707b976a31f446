// ts-http-client.mjs drives interop-runtime's HTTP mode with the official
// MCP TypeScript SDK's Streamable HTTP client (http_test.go runs it under
// node with the pinned @modelcontextprotocol/sdk). It prints one JSON line
// with what it saw; the Go test checks it.
//
//   MCP_URL=http://127.0.0.1:PORT/mcp MCP_TOKEN=... node ts-http-client.mjs
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.MCP_URL);
const headers = { Authorization: `Bearer ${process.env.MCP_TOKEN}` };
const out = {};

// Without the token the SDK's connect must fail (401).
try {
  const c = new Client({ name: "ts-e2e-no-token", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(url));
  out.unauthenticated = "connected";
} catch (err) {
  out.unauthenticated = String(err?.message ?? err);
}

const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
const client = new Client({ name: "ts-e2e", version: "1.0.0" });
await client.connect(transport);
out.sessionId = transport.sessionId;
out.protocolVersion = transport.protocolVersion;
out.server = client.getServerVersion();

const tools = await client.listTools();
out.tools = tools.tools.map((t) => t.name);

const status = await client.callTool({ name: "get_runtime_status", arguments: {} });
out.status = status.structuredContent;
out.statusIsError = status.isError ?? false;

const created = await client.callTool({
  name: "create_work_item",
  arguments: { objective: process.env.WORK_OBJECTIVE, acceptanceCriteria: ["seen by another client"] },
});
out.created = created.structuredContent;
out.createdIsError = created.isError ?? false;
out.createdText = created.content?.[0]?.text;

const bad = await client.callTool({ name: "get_work_item", arguments: { workId: 7 } });
out.badIsError = bad.isError ?? false;
out.badText = bad.content?.[0]?.text;

await transport.terminateSession();
out.terminated = transport.sessionId === undefined;
await client.close();
console.log(JSON.stringify(out));
