// WASI preview 1 calls about the process rather than files: arguments, environment, clocks,
// random bytes, poll_oneoff, exit, signals and yielding. Clocks and random bytes come from the
// task's seed and virtual clock, so honest machines agree byte for byte.
import type { SeededRandom } from "../seeded-random.ts";
import { Errno, EVENT_BYTES, Eventtype, Rights, SUBCLOCKFLAGS_ABSTIME, SUBSCRIPTION_BYTES, WasiError } from "./constants.ts";
import type { HostContext } from "./host-context.ts";
import { VIRTUAL_TICK_NS, VirtualClock } from "./virtual-clock.ts";

/** Thrown by proc_exit; the sandbox reads the exit code from it. */
export class ProcExit extends Error {
  constructor(readonly code: number) {
    super(`exit with code ${code}`);
  }
}

/** Raised by proc_raise; the task ends as a trap. */
export class TaskSignal extends Error {}

const encoder = new TextEncoder();

/** argv or environ as WASI lays them out: pointers, then NUL-terminated strings. */
function stringList(values: string[]) {
  const encoded = values.map((v) => encoder.encode(`${v}\0`));
  return { count: encoded.length, bytes: encoded.reduce((n, e) => n + e.length, 0), encoded };
}

export interface ProcessInputs {
  args: string[];
  env: Record<string, string>;
  random: SeededRandom;
}

export function processCalls(ctx: HostContext, inputs: ProcessInputs) {
  const { memory, clock, fds } = ctx;
  const args = stringList(inputs.args);
  const env = stringList(Object.entries(inputs.env).map(([k, v]) => `${k}=${v}`));

  const sizes = (list: typeof args) => (countPtr: number, bytesPtr: number) => {
    memory.u32(countPtr, list.count);
    memory.u32(bytesPtr, list.bytes);
  };
  const fill = (list: typeof args) => (ptrsPtr: number, bufPtr: number) => {
    let at = bufPtr;
    list.encoded.forEach((e, i) => {
      memory.u32(ptrsPtr + i * 4, at);
      memory.bytes(at, e.length).set(e);
      at += e.length;
    });
  };

  /** How many bytes a descriptor could give or take now (poll_oneoff's nbytes). */
  const readyBytes = (fd: number, type: number): bigint => {
    const d = fds.get(fd, Rights.POLL_FD_READWRITE);
    if (type === Eventtype.FD_WRITE) return 0n;
    if (d.kind === "pipe") return BigInt(d.input ? d.input.data.length - d.input.position : 0);
    if (d.kind === "file") return BigInt(Math.max(0, d.node.size - d.offset));
    throw new WasiError(Errno.BADF);
  };

  return {
    args_sizes_get: sizes(args),
    args_get: fill(args),
    environ_sizes_get: sizes(env),
    environ_get: fill(env),
    clock_res_get(clockId: number, ptr: number): void {
      if (!VirtualClock.known(clockId)) throw new WasiError(Errno.INVAL);
      memory.u64(ptr, VIRTUAL_TICK_NS);
    },
    clock_time_get(clockId: number, _precision: bigint, ptr: number): void {
      if (!VirtualClock.known(clockId)) throw new WasiError(Errno.INVAL);
      memory.u64(ptr, clock.read(clockId));
    },
    random_get(ptr: number, len: number): void {
      inputs.random.fill(memory.bytes(ptr, len));
    },
    // Every descriptor is in memory, so one that is polled is ready at once; when only clocks
    // are polled, the virtual clock jumps to the soonest deadline instead of waiting.
    poll_oneoff(inPtr: number, outPtr: number, count: number, neventsPtr: number): void {
      if (count === 0) throw new WasiError(Errno.INVAL);
      memory.bytes(inPtr, count * SUBSCRIPTION_BYTES);
      memory.bytes(outPtr, count * EVENT_BYTES);
      const v = memory.view();
      const events: { userdata: bigint; type: number; error: number; nbytes: bigint }[] = [];
      let soonest: { userdata: bigint; deadline: bigint } | null = null;
      for (let i = 0; i < count; i++) {
        const p = inPtr + i * SUBSCRIPTION_BYTES;
        const userdata = v.getBigUint64(p, true);
        const type = v.getUint8(p + 8);
        if (type === Eventtype.CLOCK) {
          const clockId = v.getUint32(p + 16, true);
          if (!VirtualClock.known(clockId)) {
            events.push({ userdata, type, error: Errno.INVAL, nbytes: 0n });
            continue;
          }
          const timeout = v.getBigUint64(p + 24, true);
          const absolute = (v.getUint16(p + 40, true) & SUBCLOCKFLAGS_ABSTIME) !== 0;
          const wait = absolute ? timeout - clock.peek(clockId) : timeout;
          const deadline = clock.elapsedNs + (wait > 0n ? wait : 0n);
          if (!soonest || deadline < soonest.deadline) soonest = { userdata, deadline };
        } else if (type === Eventtype.FD_READ || type === Eventtype.FD_WRITE) {
          try {
            events.push({ userdata, type, error: Errno.SUCCESS, nbytes: readyBytes(v.getUint32(p + 16, true), type) });
          } catch (e) {
            events.push({ userdata, type, error: e instanceof WasiError ? e.errno : Errno.INVAL, nbytes: 0n });
          }
        } else {
          throw new WasiError(Errno.INVAL);
        }
      }
      if (events.length === 0 && soonest) {
        if (soonest.deadline > clock.elapsedNs) clock.elapsedNs = soonest.deadline;
        events.push({ userdata: soonest.userdata, type: Eventtype.CLOCK, error: Errno.SUCCESS, nbytes: 0n });
      }
      events.forEach((e, i) => {
        const p = outPtr + i * EVENT_BYTES;
        memory.bytes(p, EVENT_BYTES).fill(0);
        v.setBigUint64(p, e.userdata, true);
        v.setUint16(p + 8, e.error, true);
        v.setUint8(p + 10, e.type);
        v.setBigUint64(p + 16, e.nbytes, true);
      });
      memory.u32(neventsPtr, events.length);
    },
    proc_exit(code: number): never {
      throw new ProcExit(code);
    },
    proc_raise(signal: number): never {
      throw new TaskSignal(`the task raised signal ${signal}`);
    },
    sched_yield(): void {},
  };
}

