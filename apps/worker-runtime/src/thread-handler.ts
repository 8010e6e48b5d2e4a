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
