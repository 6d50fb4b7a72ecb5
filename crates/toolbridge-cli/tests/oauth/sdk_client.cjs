// The TypeScript MCP SDK as an OAuth client of `toolbridge serve`: its
// ClientCredentialsProvider, given no token, meets the gateway's 401,
// follows its resource_metadata to the issuer, gets a token for the
// gateway's resource (client_credentials, RFC 8707) and then lists the tools
// and calls `echo`. Prints {"tools": [names], "echo": [texts]} as one line.
//
//   NODE_DEPS=.deps/node node sdk_client.cjs URL ISSUER
//
// Any failure: the error on stderr and exit code 1.
"use strict";
const { createRequire } = require("node:module");
const path = require("node:path");
const sdk = createRequire(path.resolve(process.env.NODE_DEPS, "package.json"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = sdk("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ClientCredentialsProvider } = sdk("@modelcontextprotocol/sdk/client/auth-extensions.js");

async function main() {
  const [url, issuer] = process.argv.slice(2);
  const provider = new ClientCredentialsProvider({
    clientId: "sdk-client",
    clientSecret: "sdk-secret",
    expectedIssuer: issuer,
    scope: "tools.read tools.write",
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: "oauth-ts", version: "1" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const result = await client.callTool({ name: "echo", arguments: { text: "sdk signed in" } });
  const echo = result.content.filter((c) => c.type === "text").map((c) => c.text);
  console.log(JSON.stringify({ tools: tools.map((t) => t.name), echo }));
  await client.close();
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
