// The TypeScript SDK's client running the peers workload against
// `toolbridge example-server` (see run.py): echo with a 100-byte argument,
// sequential and with N in flight. Prints one JSON line.
//
//   node client.mjs TOOLBRIDGE_EXE SEQ_CALLS CONC_CALLS IN_FLIGHT
//   node client.mjs TOOLBRIDGE_EXE once      (start, one call, exit)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [exe, seqArg, concArg, inFlightArg] = process.argv.slice(2);
const text = "x".repeat(100);

const client = new Client({ name: "peers-bench", version: "1" });
await client.connect(new StdioClientTransport({ command: exe, args: ["example-server"] }));

async function call() {
  const result = await client.callTool({ name: "echo", arguments: { text } });
  if (result.isError || result.content[0].text !== text) throw new Error("bad result");
}

async function run(calls, inFlight) {
  let next = 0;
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
  return { calls_per_sec: calls / secs, cpu_us_per_call: (cpu.user + cpu.system) / calls };
}

if (seqArg === "once") {
  await call();
} else {
  await run(200, 8); // warm-up
  const seq = await run(Number(seqArg), 1);
  const conc = await run(Number(concArg), Number(inFlightArg));
  console.log(JSON.stringify({ seq, conc }));
}
await client.close();
