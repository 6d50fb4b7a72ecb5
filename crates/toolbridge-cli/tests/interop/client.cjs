// The TypeScript MCP SDK as a client of `toolbridge serve`, for the gateway's
// interop tests. Runs one plan and prints what it saw as one JSON line.
//
//   NODE_DEPS=.deps/node node client.cjs PLAN_JSON http URL
//   NODE_DEPS=.deps/node node client.cjs PLAN_JSON stdio COMMAND ARGS...
//
// $INTEROP_TOKEN, when set, is sent as `Authorization: Bearer ...`.
// PLAN: {"expectTools": [names], "calls": [{"name", "arguments"}], "reads": [URI],
//        "prompts": [{"name", "arguments"}]}
//   (tools are listed again, for 90 s at most, until every expected one is there: an
//   upstream that missed its first start on a loaded machine is started again)
//   -> {"tools": [names], "calls": [[texts]], "reads": [[texts]], "prompts": [[texts]]}
// or    {"rendezvous": {"name", "tag", "expect"}}
//   -> {"result": [texts], "progress": [messages], "logs": [data], "elicitations": [messages]}
// or    {"asks": [{"name", "arguments"}]}: calls whose server asks the client mid-call;
//   the client declares sampling too, answers an elicitation with `name` and `reply`
//   ("ts answer to MESSAGE") and a sampling request with "ts model says: PROMPT" from
//   the model "ts-model"
//   -> {"protocolVersion", "results": [[texts]], "isError": [bool],
//       "elicitations": [messages], "samplings": [prompts]}
// or    {"progress": {"name", "arguments"}}
//   -> {"result": [texts], "progress": [[progress, total]]}
// or    {"search": {"query", "arguments", "noMatch", "outside", "pull", "pulled"}}: a
//   search-mode profile: lists the tools, searches `query`, calls the first tool found
//   through call_tool with `arguments`; searches `noMatch` and `outside`; searches
//   `pulled` (for 30 s at most) until the tool the first such search found is gone
//   after calling `pull` through call_tool
//   -> {"tools": [names], "found": [names], "called": [texts], "calledError": bool,
//       "noMatch": [names], "noMatchError": bool, "outside": [names],
//       "beforePull": [names], "afterPull": [names]}
// Any failure: the error on stderr and exit code 1.
"use strict";
const { createRequire } = require("node:module");
const path = require("node:path");
const sdk = createRequire(path.resolve(process.env.NODE_DEPS, "package.json"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = sdk("@modelcontextprotocol/sdk/client/streamableHttp.js");
const {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} = sdk("@modelcontextprotocol/sdk/types.js");

const texts = (content) => content.filter((c) => c.type === "text").map((c) => c.text);

async function main() {
  const [planJson, kind, ...target] = process.argv.slice(2);
  const plan = JSON.parse(planJson);
  // Sampling only where a plan asks for it: server-everything lists tools
  // by what its client can do, and the other plans expect its usual list.
  const capabilities = plan.asks
    ? { elicitation: { form: {} }, sampling: {} }
    : { elicitation: { form: {} } };
  const client = new Client({ name: "interop-ts", version: "1" }, { capabilities });
  const seen = { progress: [], logs: [], elicitations: [], samplings: [] };
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    seen.logs.push(n.params.data);
  });
  client.setRequestHandler(ElicitRequestSchema, async (r) => {
    seen.elicitations.push(r.params.message);
    const reply = `ts answer to ${r.params.message}`;
    return { action: "accept", content: plan.asks ? { name: "Ada", reply } : { reply } };
  });
  if (plan.asks) {
    client.setRequestHandler(CreateMessageRequestSchema, async (r) => {
      const first = r.params.messages[0]?.content;
      const prompt = (Array.isArray(first) ? first[0] : first)?.text ?? "";
      seen.samplings.push(prompt);
      return {
        role: "assistant",
        content: { type: "text", text: `ts model says: ${prompt}` },
        model: "ts-model",
      };
    });
  }
  let transport;
  if (kind === "http") {
    const headers = process.env.INTEROP_TOKEN
      ? { Authorization: `Bearer ${process.env.INTEROP_TOKEN}` }
      : {};
    transport = new StreamableHTTPClientTransport(new URL(target[0]), { requestInit: { headers } });
  } else {
    transport = new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" });
  }
  await client.connect(transport);
  const out = {};
  if (plan.asks) {
    const results = [];
    const isError = [];
    for (const call of plan.asks) {
      const result = await client.callTool(call, undefined, { timeout: 60000 });
      results.push(texts(result.content));
      isError.push(!!result.isError);
    }
    Object.assign(out, {
      protocolVersion: transport.protocolVersion,
      results,
      isError,
      elicitations: seen.elicitations,
      samplings: seen.samplings,
    });
  } else if (plan.progress) {
    const steps = [];
    const result = await client.callTool(plan.progress, undefined, {
      onprogress: (p) => steps.push([p.progress, p.total]),
      timeout: 60000,
    });
    Object.assign(out, { result: texts(result.content), progress: steps });
  } else if (plan.search) {
    const s = plan.search;
    const search = async (query) => {
      const result = await client.callTool({ name: "search_tools", arguments: { query, limit: 5 } });
      return { names: result.structuredContent.tools.map((t) => t.name), isError: !!result.isError };
    };
    out.tools = (await client.listTools()).tools.map((t) => t.name);
    out.found = (await search(s.query)).names;
    const called = await client.callTool({
      name: "call_tool",
      arguments: { name: out.found[0], arguments: s.arguments },
    });
    out.called = texts(called.content);
    out.calledError = !!called.isError;
    const none = await search(s.noMatch);
    out.noMatch = none.names;
    out.noMatchError = none.isError;
    out.outside = (await search(s.outside)).names;
    out.beforePull = (await search(s.pulled)).names;
    await client.callTool({ name: "call_tool", arguments: { name: s.pull, arguments: {} } });
    const deadline = Date.now() + 30000;
    for (;;) {
      out.afterPull = (await search(s.pulled)).names;
      if (!out.afterPull.includes(out.beforePull[0]) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  } else if (plan.rendezvous) {
    const { name, tag, expect } = plan.rendezvous;
    if (client.getServerCapabilities()?.logging) await client.setLoggingLevel("info");
    const result = await client.callTool({ name, arguments: { tag, expect } }, undefined, {
      onprogress: (p) => seen.progress.push(p.message),
      timeout: 60000,
    });
    Object.assign(out, seen, { result: texts(result.content), isError: !!result.isError });
  } else {
    const deadline = Date.now() + 90000;
    for (;;) {
      out.tools = [];
      let cursor;
      do {
        const page = await client.listTools({ cursor });
        out.tools.push(...page.tools.map((t) => t.name));
        cursor = page.nextCursor;
      } while (cursor);
      const missing = (plan.expectTools ?? []).filter((n) => !out.tools.includes(n));
      if (missing.length === 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    out.calls = [];
    for (const call of plan.calls) out.calls.push(texts((await client.callTool(call)).content));
    out.reads = [];
    for (const uri of plan.reads) {
      const read = await client.readResource({ uri });
      out.reads.push(read.contents.map((c) => c.text ?? c.blob));
    }
    out.prompts = [];
    for (const p of plan.prompts) {
      out.prompts.push((await client.getPrompt(p)).messages.map((m) => m.content.text));
    }
  }
  console.log(JSON.stringify(out));
  await client.close();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`interop-ts: ${e.stack || e}`);
    process.exit(1);
  },
);
