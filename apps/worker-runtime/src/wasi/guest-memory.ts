// Reads and writes in the task's linear memory. The buffer is looked up on every access
// because memory.grow replaces it.
import { Errno, WasiError } from "./constants.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });

export class GuestMemory {
  private memory: WebAssembly.Memory | null = null;

  attach(memory: WebAssembly.Memory): void {
    this.memory = memory;
  }

  get buffer(): ArrayBuffer {
    if (!this.memory) throw new Error("a WASI call came before the module's memory was attached");
    return this.memory.buffer;
  }

  view(): DataView {
    return new DataView(this.buffer);
  }

  /** A live window onto guest memory; EFAULT when it reaches past the end. */
  bytes(ptr: number, len: number): Uint8Array {
    const buffer = this.buffer;
    if (ptr < 0 || len < 0 || ptr + len > buffer.byteLength) throw new WasiError(Errno.FAULT);
    return new Uint8Array(buffer, ptr, len);
  }

  /** A path or other string argument; WASI strings are UTF-8 (EILSEQ otherwise). */
  string(ptr: number, len: number): string {
    try {
      return decoder.decode(this.bytes(ptr, len));
    } catch (e) {
      if (e instanceof WasiError) throw e;
      throw new WasiError(Errno.ILSEQ);
    }
  }

  /** The (buf, len) pairs of an iovec or ciovec array. */
  iovecs(ptr: number, count: number): Uint8Array[] {
    const v = this.view();
    const out: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      const at = ptr + i * 8;
      out.push(this.bytes(v.getUint32(at, true), v.getUint32(at + 4, true)));
    }
    return out;
  }

  u32(ptr: number, value: number): void {
    this.view().setUint32(ptr, value, true);
  }

  u64(ptr: number, value: bigint): void {
    this.view().setBigUint64(ptr, value, true);
  }
}
