// The official TypeScript SDK as an oracle for the protocol tests (never part of the product).
//   node ts_sdk_oracle.js SDK_DIR validate    stdin: one {"method", "result"} per line; prints one
//                                             line each: "ok" or "reject <path>"
//   node ts_sdk_oracle.js SDK_DIR list URL streamable|sse
//                                             connects as a client would and lists tools; prints
//                                             {"tools": N} or {"error": "..."}
// SDK_DIR holds node_modules/@modelcontextprotocol/sdk (installed by the test at a pinned version).
const path = require("path");
const [sdkDir, mode, url, kind] = process.argv.slice(2);
const sdk = (p) => require(path.join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/cjs", p));
const types = sdk("types.js");

if (mode === "validate") {
  const schemas = { initialize: types.InitializeResultSchema, "tools/list": types.ListToolsResultSchema };
  const lines = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l.length > 0);
  for (const line of lines) {
    const { method, result } = JSON.parse(line);
    const parsed = schemas[method].safeParse(result);
    console.log(parsed.success ? "ok" : "reject " + parsed.error.issues[0].path.join("."));
  }
} else if (mode === "list") {
  (async () => {
    const { Client } = sdk("client/index.js");
    const Transport = kind === "sse" ? sdk("client/sse.js").SSEClientTransport
      : sdk("client/streamableHttp.js").StreamableHTTPClientTransport;
    const client = new Client({ name: "oracle", version: "1" });
    try {
      await client.connect(new Transport(new URL(url)));
      const listed = await client.listTools();
      console.log(JSON.stringify({ tools: listed.tools.length }));
    } catch (err) {
      console.log(JSON.stringify({ error: String(err && err.message || err).slice(0, 300) }));
    }
    await client.close().catch(() => {});
    process.exit(0);
  })();
}
