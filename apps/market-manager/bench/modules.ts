// npm run -s bench:modules -- [--size BYTES] [--fetches N] [--json]
//
// What a worker's fetch of a task's program (`worker.module`) costs: a market of its own (in this
// process), one program of --size bytes stored, fetched --fetches times one after another by a
// worker's token whose machine holds a lease of a task running it (the only machines it is sent
// to), after 20 fetches uncounted, as every machine that gets a task of a new job fetches it
// once. Prints the fetch's time as the caller sees it (`fetchMs`) and this process's CPU per fetch
// (`cpuMsPerFetch`: the market's answer and the client's reading of it together, both here).
import { createHash } from "node:crypto";
import { args, print, round, Timings } from "./harness.ts";
import { startTestMarket } from "../../../test/support/market.ts";
import { paddedModule } from "../../../test/support/wasm.ts";
import { leaseOfModule } from "../../../test/support/worker.ts";

const opt = args({ size: 1_000_000, fetches: 200 });
const market = await startTestMarket({ MAX_MODULE_BYTES: String(Math.max(8 * 1024 * 1024, opt.size)) });
try {
  const consumer = await market.signUp("buyer@bench.test", ["consumer"]);
  const { token } = await consumer.account.tokens.create.mutate({ name: "upload", scopes: ["consume"] });
  const program = paddedModule(opt.size);
  const put = await fetch(`${market.url}/api/modules`, { method: "PUT", headers: { authorization: `Bearer ${token}` }, body: new Uint8Array(program) });
  if (!put.ok) throw new Error(`the program was not stored: ${await put.text()}`);
  const hash = createHash("sha256").update(program).digest("hex");
  const { worker } = await market.signUpProducer("seller@bench.test");
  const { machineId } = await worker.worker.register.mutate({
    name: "bench", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.001, userAgent: "bench",
  });
  await leaseOfModule(consumer, worker, machineId, hash);
  const fetchOnce = async () => {
    const { bytes } = await worker.worker.module.query({ moduleHash: hash });
    if (Buffer.from(bytes, "base64").length !== program.length) throw new Error("the program arrived with the wrong length");
  };
  for (let i = 0; i < 20; i++) await fetchOnce();
  const timings = new Timings();
  const cpu = process.cpuUsage();
  for (let i = 0; i < opt.fetches; i++) {
    const t = performance.now();
    await fetchOnce();
    timings.add("fetch", performance.now() - t);
  }
  const used = process.cpuUsage(cpu);
  print({ size: opt.size, fetches: opt.fetches, fetchMs: timings.latency("fetch"), cpuMsPerFetch: round((used.user + used.system) / 1000 / opt.fetches) }, opt.json);
} catch (e) {
  console.error(`bench:modules stopped: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  await market.stop();
}
