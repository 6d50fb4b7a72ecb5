#!/usr/bin/env node
// Starts an MCP server over stdio, lists its tools (following pagination)
// and prints a fixture: {"package", "version", "serverInfo", "tools"}.
//
//   node scripts/mcp-list-tools.mjs PACKAGE VERSION -- COMMAND [ARGS...]
//
// Plain JSON-RPC over the child's stdin/stdout, no dependencies, so the
// capture does not depend on any client library we are testing against.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const sep = process.argv.indexOf("--");
const [pkg, version] = process.argv.slice(2, sep);
const command = process.argv.slice(sep + 1);
if (sep < 0 || !pkg || !version || command.length === 0) {
  console.error("usage: mcp-list-tools.mjs PACKAGE VERSION -- COMMAND [ARGS...]");
  process.exit(2);
}

const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const timer = setTimeout(() => fail("timed out after 30 s"), 30_000);
const pending = new Map();
let nextId = 1;

function fail(message) {
  console.error(`mcp-list-tools: ${message}`);
  child.kill("SIGKILL");
  process.exit(1);
}

child.on("exit", (code) => {
  if (pending.size > 0) fail(`server exited with ${code} before answering`);
});

createInterface({ input: child.stdout }).on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return; // not JSON-RPC (a log line)
  }
  const waiter = pending.get(msg.id);
  if (!waiter) return;
  pending.delete(msg.id);
  if (msg.error) fail(`${waiter.method}: ${JSON.stringify(msg.error)}`);
  waiter.resolve(msg.result);
});

function request(method, params) {
  const id = nextId++;
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  return new Promise((resolve) => pending.set(id, { method, resolve }));
}

const init = await request("initialize", {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "toolbridge-fixture-capture", version: "1" },
});
child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");

const tools = [];
let cursor;
do {
  const page = await request("tools/list", cursor ? { cursor } : {});
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);

clearTimeout(timer);
child.stdin.end();
child.kill("SIGTERM");
process.stdout.write(
  JSON.stringify({ package: pkg, version, serverInfo: init.serverInfo, tools }, null, 2) + "\n",
);
process.exit(0);
