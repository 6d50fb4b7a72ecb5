// An MCP Apps server (SEP-1865) built with the MCP Apps SDK's own server
// helpers (@modelcontextprotocol/ext-apps/server) on the TypeScript SDK,
// stdio. Its tool `counter` links the UI resource ui://counter/app.html, a
// page with a button "Record a click" whose click calls the server's tool
// `record_click` back through the host (the App class of the same SDK,
// inlined into the page: an app gets no network). `record_click` is for
// the app only (`visibility: ["app"]`); `clicks` says how many there were;
// `reset` is for the model only (`visibility: ["model"]`), and the page's
// second button, "Try a model-only tool", asks the host to call it anyway
// (a host must refuse). When the host tears the app down
// (`ui/resource-teardown`), the app first calls `record_teardown`.
// `host_ui` says what the client declared of the MCP Apps extension.
// Given a folder after the SDK's, each click also appends a line to
// clicks.txt there, so a test sees the call reached this process;
// $APPS_LABEL names the server in the page's <meta name="served-by"> (two
// of them behind one gateway are told apart by it). Both folders are
// arguments, so that toolbridge's sandbox lets the server read the one and
// write the other.
//
// Run: node apps_server.mjs .deps/ext-apps [CLICKS_FOLDER]

import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [deps, clicksFolder] = process.argv.slice(2);
if (!deps) {
  console.error("usage: apps_server.mjs EXT_APPS_DEPS [CLICKS_FOLDER] (the SDK's folder: .deps/ext-apps, which scripts/setup-test-deps.sh fills)");
  process.exit(2);
}
const modules = join(deps, "node_modules");
const load = (path) => import(pathToFileURL(join(modules, path)).href);
const { McpServer } = await load("@modelcontextprotocol/sdk/dist/esm/server/mcp.js");
const { StdioServerTransport } = await load("@modelcontextprotocol/sdk/dist/esm/server/stdio.js");
const { registerAppTool, registerAppResource, getUiCapability, RESOURCE_MIME_TYPE } = await load(
  "@modelcontextprotocol/ext-apps/dist/src/server/index.js",
);

const UI = "ui://counter/app.html";
const LABEL = (process.env.APPS_LABEL || "apps-server").replace(/[^A-Za-z0-9_-]/g, "");
let clicks = 0;

// The SDK's App class for the page: its bundle with its dependencies, its
// closing `export{x as App, ...}` turned into a local object, so that one
// inline module script holds both it and the app.
function appClass() {
  const bundle = readFileSync(
    join(modules, "@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js"),
    "utf8",
  );
  const exported = /export\{([^}]*)\};?\s*$/.exec(bundle);
  if (!exported) throw new Error("app-with-deps.js does not end in an export list");
  const names = exported[1]
    .split(",")
    .map((pair) => pair.trim().split(/\s+as\s+/))
    .map(([local, name]) => `${name ?? local}: ${local}`);
  return `${bundle.slice(0, exported.index)}\nconst McpApps = { ${names.join(", ")} };\n`;
}

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Click counter</title>
<meta name="served-by" content="${LABEL}">
<style>
  body { font: 16px system-ui, sans-serif; margin: 12px; color: #111; background: #fff; }
  button { font: inherit; padding: 6px 14px; }
</style>
</head>
<body>
<main>
<h1>Click counter</h1>
<p id="greeting">Waiting for the tool's result…</p>
<button type="button" id="record">Record a click</button>
<p id="count" role="status">No clicks recorded yet.</p>
<button type="button" id="reset">Try a model-only tool</button>
<p id="reset-status" role="status">Not tried yet.</p>
<p id="host"></p>
</main>
<script type="module">
${appClass()}
const app = new McpApps.App({ name: "click-counter", version: "1.0.0" });
app.ontoolresult = (result) => {
  const text = (result.content || []).find((b) => b.type === "text");
  document.getElementById("greeting").textContent = text ? text.text : "The tool answered.";
};
document.getElementById("record").addEventListener("click", async () => {
  const status = document.getElementById("count");
  try {
    const result = await app.callServerTool({ name: "record_click", arguments: {} });
    status.textContent = result.structuredContent
      ? "The server counted " + result.structuredContent.clicks + " click(s)."
      : "The server answered.";
  } catch (error) {
    status.textContent = "The click was not recorded: " + (error && error.message);
  }
});
document.getElementById("reset").addEventListener("click", async () => {
  const status = document.getElementById("reset-status");
  try {
    await app.callServerTool({ name: "reset", arguments: {} });
    status.textContent = "The host called it.";
  } catch (error) {
    status.textContent = "Refused: " + (error && error.message);
  }
});
// Before it goes, the app tells the server (the host waits for this answer).
app.onteardown = async () => {
  await app.callServerTool({ name: "record_teardown", arguments: {} });
  return {};
};
await app.connect();
// What the host said of itself in the handshake, for the test to read.
const host = app.getHostVersion() || {};
const context = app.getHostContext() || {};
document.getElementById("host").textContent =
  "Host: " + host.name + " " + host.version + "; tool " +
  (context.toolInfo ? context.toolInfo.tool.name : "?") + "; " + context.displayMode +
  "; server tools " + (app.getHostCapabilities()?.serverTools ? "yes" : "no");
</script>
</body>
</html>`;

const server = new McpServer({ name: "apps-server", version: "1.0.0" });

registerAppResource(server, "Click counter", UI, { description: "The counter's page." }, async () => ({
  contents: [{ uri: UI, mimeType: RESOURCE_MIME_TYPE, text: html }],
}));

registerAppTool(
  server,
  "counter",
  {
    title: "Click counter",
    description: "Shows a click counter app.",
    _meta: { ui: { resourceUri: UI } },
  },
  async () => ({
    content: [{ type: "text", text: `The counter has ${clicks} click(s).` }],
    structuredContent: { clicks },
  }),
);

registerAppTool(
  server,
  "record_click",
  {
    description: "Records a click of the counter app's button (for the app only).",
    _meta: { ui: { resourceUri: UI, visibility: ["app"] } },
  },
  async () => {
    clicks += 1;
    if (clicksFolder) appendFileSync(join(clicksFolder, "clicks.txt"), `click ${clicks}\n`);
    return {
      content: [{ type: "text", text: `Recorded click ${clicks}.` }],
      structuredContent: { clicks },
    };
  },
);

registerAppTool(
  server,
  "reset",
  {
    description: "Sets the count back to zero (for the model only).",
    _meta: { ui: { resourceUri: UI, visibility: ["model"] } },
  },
  async () => {
    clicks = 0;
    if (clicksFolder) appendFileSync(join(clicksFolder, "clicks.txt"), "reset\n");
    return { content: [{ type: "text", text: "Reset." }] };
  },
);

registerAppTool(
  server,
  "record_teardown",
  {
    description: "Records that the host tore the counter app down (for the app only).",
    _meta: { ui: { resourceUri: UI, visibility: ["app"] } },
  },
  async () => {
    if (clicksFolder) appendFileSync(join(clicksFolder, "clicks.txt"), "teardown\n");
    return { content: [{ type: "text", text: "Noted." }] };
  },
);

server.registerTool("clicks", { description: "How many clicks were recorded." }, async () => ({
  content: [{ type: "text", text: String(clicks) }],
  structuredContent: { clicks },
}));

// What the client declared of the MCP Apps extension, as the SDK reads it
// (a host that renders apps declares `io.modelcontextprotocol/ui`).
server.registerTool("host_ui", { description: "What the client declared of the MCP Apps extension." }, async () => ({
  content: [{ type: "text", text: `ui: ${JSON.stringify(getUiCapability(server.server.getClientCapabilities()) ?? null)}` }],
}));

await server.connect(new StdioServerTransport());
