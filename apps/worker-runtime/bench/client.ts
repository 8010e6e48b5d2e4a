// `npm run -s bench:worker-client [-- --machines M --rounds R]`: what the Node worker's own client
// (src/node/trpc-api.ts) costs its host per call. M machines' clients each send R heartbeats, all
// machines at once per round, to a server in another process that answers every call at once; prints
// this process's CPU per call (user + system) and the calls per second. Figures, not pass/fail:
// the machine's load moves them. The server's CPU is not counted.
import { fork } from "node:child_process";
import http from "node:http";
import { createTrpcApi } from "../src/node/trpc-api.ts";

if (process.argv[2] === "--serve") {
  const body = JSON.stringify({ result: { data: { expiredLeaseIds: [] } } });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body));
  });
  server.listen(0, "127.0.0.1", () => process.send!((server.address() as { port: number }).port));
} else {
  const opt = { machines: 100, rounds: 200 };
  for (let i = 2; i < process.argv.length; i += 2) {
    const name = process.argv[i]!.replace(/^--/, "");
    if (!(name in opt)) throw new Error(`unknown option --${name}; options: --machines N --rounds N`);
    opt[name as keyof typeof opt] = Number(process.argv[i + 1]);
  }
  const server = fork(import.meta.filename, ["--serve"], { execArgv: ["--import", "tsx"] });
  const port = await new Promise<number>((resolve) => server.once("message", (p) => resolve(p as number)));
  const apis = Array.from({ length: opt.machines }, () => createTrpcApi(`http://127.0.0.1:${port}`, "cmk_bench"));
  const beat = { machineId: "00000000-0000-4000-8000-000000000000", leaseIds: [] };
  const round = () => Promise.all(apis.map((api) => api.heartbeat(beat)));
  for (let r = 0; r < Math.min(20, opt.rounds); r++) await round(); // connections open, code warm
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let r = 0; r < opt.rounds; r++) await round();
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const calls = opt.rounds * opt.machines;
  console.log(JSON.stringify({ machines: opt.machines, calls, cpuMicrosecondsPerCall: Math.round((used.user + used.system) / calls), callsPerSecond: Math.round(calls / seconds) }));
  server.kill();
}
