// What a sandbox thread does with each message from its host; shared by the browser's Web
// Worker entry and the Node pool's worker thread so both behave the same.
import { runBenchmark } from "./benchmark.ts";
import { HostToThread, MESSAGE_VERSION, type ThreadToHost } from "./messages.ts";
import { runTask } from "./sandbox.ts";

export async function handleHostMessage(raw: unknown, post: (message: ThreadToHost) => void): Promise<void> {
  const parsed = HostToThread.safeParse(raw);
  if (!parsed.success) {
    const runId = typeof raw === "object" && raw !== null && "runId" in raw && typeof raw.runId === "string" ? raw.runId : null;
    const version = typeof raw === "object" && raw !== null && "version" in raw ? raw.version : undefined;
    const message =
      version !== MESSAGE_VERSION
        ? `message version ${String(version)} not understood; this worker speaks version ${MESSAGE_VERSION}`
        : `bad message: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`;
    post({ version: MESSAGE_VERSION, type: "failed", runId, message });
    return;
  }
  const msg = parsed.data;
  try {
    if (msg.type === "run") {
      const outcome = await runTask({
        module: msg.module,
        args: msg.args,
        stdin: msg.stdin,
        files: msg.files,
        env: msg.env,
        seed: msg.seed,
        limits: msg.limits,
        ...(msg.pacing ? { pacing: msg.pacing } : {}),
      });
      post({ version: MESSAGE_VERSION, type: "result", runId: msg.runId, outcome });
    } else {
      const result = await runBenchmark({ durationMs: msg.durationMs });
      post({ version: MESSAGE_VERSION, type: "benchmark-result", runId: msg.runId, result });
    }
  } catch (e) {
    post({ version: MESSAGE_VERSION, type: "failed", runId: msg.runId, message: e instanceof Error ? e.message : String(e) });
  }
}

// The smallest command: (module (memory (export "memory") 1) (func (export "_start"))).
const WARM_UP_MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type: () -> ()
  0x03, 0x02, 0x01, 0x00, // function 0 has type 0
  0x05, 0x03, 0x01, 0x00, 0x01, // one memory of one page
  0x07, 0x13, 0x02, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00, 0x06, 0x5f, 0x73, 0x74, 0x61, 0x72, 0x74, 0x00, 0x00, // exports
  0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b, // an empty body
]);

/**
 * Runs one empty task through the whole path a task takes (message check, sandbox, result), so a
 * new thread compiles that code before it says it is ready, not while its first task waits.
 */
async function warmUp(): Promise<void> {
  await handleHostMessage(
    { version: MESSAGE_VERSION, type: "run", runId: "warm-up", module: new WebAssembly.Module(WARM_UP_MODULE), args: [], stdin: new Uint8Array(0), seed: "warm-up", limits: { memoryPages: 1, outputBytes: 0 } },
    () => {},
  );
}

/**
 * A thread's life: listens at once, warms up, then answers its host's messages (those that came
 * meanwhile first, in order) and says it is ready. Both thread entries run this.
 */
export async function serveThread(listen: (onMessage: (raw: unknown) => void) => void, post: (message: ThreadToHost) => void): Promise<void> {
  const early: unknown[] = [];
  let onMessage = (raw: unknown) => void early.push(raw);
  listen((raw) => onMessage(raw));
  await warmUp();
  onMessage = (raw) => void handleHostMessage(raw, post);
  for (const raw of early.splice(0)) onMessage(raw);
  post({ version: MESSAGE_VERSION, type: "ready" });
}
