import { describe, expect, it } from "vitest";
import { MESSAGE_VERSION, ThreadToHost, type ThreadToHost as Reply } from "./messages.ts";
import { exampleBytes } from "./testing/fixtures.ts";
import { handleHostMessage, serveThread } from "./thread-handler.ts";

async function reply(raw: unknown): Promise<Reply> {
  const replies: Reply[] = [];
  await handleHostMessage(raw, (m) => replies.push(ThreadToHost.parse(m)));
  expect(replies).toHaveLength(1);
  return replies[0]!;
}

describe("sandbox thread messages", () => {
  it("answers a run message with the task's outcome under the same runId", async () => {
    const module = await WebAssembly.compile(exampleBytes("primes") as Uint8Array<ArrayBuffer>);
    const r = await reply({
      version: MESSAGE_VERSION,
      type: "run",
      runId: "r7",
      module,
      args: ["0", "100"],
      stdin: new Uint8Array(0),
      seed: "s",
      limits: { memoryPages: 64, outputBytes: 100 },
    });
    expect(r).toMatchObject({ type: "result", runId: "r7", outcome: { exitCode: 0 } });
  });

  it("refuses a message from another catalog version and says which it speaks", async () => {
    const r = await reply({ version: 99, type: "benchmark", runId: "r1", durationMs: 10 });
    expect(r).toMatchObject({ type: "failed", runId: "r1" });
    if (r.type === "failed") expect(r.message).toContain(`version ${MESSAGE_VERSION}`);
  });

  it("refuses a malformed message and names the bad field", async () => {
    const r = await reply({ version: MESSAGE_VERSION, type: "run", runId: "r2", args: [] });
    expect(r.type).toBe("failed");
    if (r.type === "failed") expect(r.message).toContain("module");
  });

  it("answers a message that came while the thread warmed up, and says it is ready once warm", async () => {
    const replies: Reply[] = [];
    let deliver: (raw: unknown) => void = () => {};
    const serving = serveThread((onMessage) => (deliver = onMessage), (m) => replies.push(ThreadToHost.parse(m)));
    deliver({ version: MESSAGE_VERSION, type: "run", runId: "early", module: await WebAssembly.compile(exampleBytes("primes") as Uint8Array<ArrayBuffer>), args: ["0", "100"], stdin: new Uint8Array(0), seed: "s", limits: { memoryPages: 64, outputBytes: 100 } });
    await serving;
    expect(replies[0]).toEqual({ version: MESSAGE_VERSION, type: "ready" });
    for (let i = 0; i < 100 && replies.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(replies[1]).toMatchObject({ type: "result", runId: "early", outcome: { exitCode: 0 } });
  });
});
