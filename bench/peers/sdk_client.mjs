// The TypeScript SDK's client running the clients benchmark's workload (see
// clients.py): echo with a 100-byte argument, SEQ calls one at a time, then
// CONC calls with IN_FLIGHT in flight, after a warm-up. `Client` with
// `StreamableHTTPClientTransport` for a URL, `StdioClientTransport` for
// `stdio:EXE`. Prints one JSON line: calls/s, p50/p99 ms, client CPU per call.
//
//   node sdk_client.mjs URL|stdio:EXE SEQ_CALLS CONC_CALLS IN_FLIGHT
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [target, seqArg, concArg, inFlightArg] = process.argv.slice(2);
const text = "x".repeat(100);

const client = new Client({ name: "clients-bench", version: "1" });
const transport = target.startsWith("stdio:")
  ? new StdioClientTransport({ command: target.slice(6), args: ["example-server"] })
  : new StreamableHTTPClientTransport(new URL(target));
await client.connect(transport);

const latencies = [];
async function call() {
  const t0 = process.hrtime.bigint();
  const result = await client.callTool({ name: "echo", arguments: { text } });
  latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
  if (result.isError || result.content[0].text !== text) throw new Error("bad result");
}

async function run(calls, inFlight) {
  let next = 0;
  latencies.length = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const worker = async () => {
    while (next < calls) {
      next++;
      await call();
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, calls) }, worker));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const lat = [...latencies].sort((a, b) => a - b);
  return {
    calls_per_sec: calls / secs,
    cpu_us_per_call: (cpu.user + cpu.system) / calls,
    p50_ms: lat[Math.floor(lat.length / 2)],
    p99_ms: lat[Math.min(lat.length - 1, Math.floor((lat.length * 99) / 100))],
  };
}

await run(Math.min(100, Number(seqArg)), 8); // warm-up
const seq = await run(Number(seqArg), 1);
const conc = await run(Number(concArg), Number(inFlightArg));
console.log(JSON.stringify({ seq, conc }));
await client.close();
