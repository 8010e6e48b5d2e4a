import type { Lease, OfferRequest, RegisterRequest, ReportRequest, WorkerApi } from "../api.ts";
import { MachineControls } from "../controls/machine-controls.ts";
import { toBase64 } from "../base64.ts";
import { sha256Hex } from "../sandbox.ts";

// An in-memory market: a queue of tasks, leases handed out on request, reports checked
// against the current leases. Enough to exercise the loop; the real service is tested elsewhere.
export class FakeMarket implements WorkerApi {
  modules = new Map<string, Uint8Array>();
  queue: Omit<Lease, "leaseId" | "expiresAt">[] = [];
  leases = new Map<string, Lease>();
  reports: ReportRequest[] = [];
  registered: RegisterRequest[] = [];
  departed: string[] = [];
  heartbeats: string[][] = [];
  expireOnHeartbeat = new Set<string>();
  maxOutstanding = 0;
  /** The controls the market keeps for the machine, and every offer its worker made. */
  controls = MachineControls.parse({});
  offers: OfferRequest[] = [];
  /** Lease calls, with when they were made (ms, performance.now()). */
  leaseTimes: number[] = [];
  private nextLease = 0;
  private readonly handedOut = new Map<string, string>();

  async addModule(bytes: Uint8Array): Promise<string> {
    const hash = await sha256Hex(bytes);
    this.modules.set(hash, bytes);
    return hash;
  }
  async register(input: RegisterRequest) {
    this.registered.push(input);
    this.controls = MachineControls.parse({ ...this.controls, ...input.controls });
    return { machineId: "m1", leaseTimeoutMs: 10_000, heartbeatIntervalMs: 50, controls: this.controls };
  }
  async lease({ max }: { machineId: string; max: number }) {
    this.leaseTimes.push(performance.now());
    const leases = this.queue.splice(0, max).map((t) => ({ ...t, leaseId: `l${this.nextLease++}`, expiresAt: Date.now() + 10_000 }));
    for (const l of leases) {
      this.leases.set(l.leaseId, l);
      this.handedOut.set(l.leaseId, l.taskId);
    }
    this.maxOutstanding = Math.max(this.maxOutstanding, this.leases.size);
    return { leases };
  }
  /** The task a lease was for (reports name only their lease). */
  leaseTask(leaseId: string): string | undefined {
    return this.handedOut.get(leaseId);
  }
  async module({ moduleHash }: { moduleHash: string }) {
    const bytes = this.modules.get(moduleHash);
    if (!bytes) throw Object.assign(new Error("No module with that hash."), { data: { code: "NOT_FOUND", reason: { code: "not-found" } } });
    return { bytes: toBase64(bytes) };
  }
  async heartbeat({ leaseIds }: { machineId: string; leaseIds: string[] }) {
    this.heartbeats.push(leaseIds);
    const expiredLeaseIds = leaseIds.filter((id) => this.expireOnHeartbeat.has(id));
    for (const id of expiredLeaseIds) this.leases.delete(id);
    return { expiredLeaseIds, controls: this.controls };
  }
  async report(r: ReportRequest) {
    this.reports.push(r);
    if (!this.leases.delete(r.leaseId)) return { accepted: false, reason: { code: "stale-lease" } };
    return { accepted: true };
  }
  async offer(input: OfferRequest) {
    this.offers.push(input);
    this.controls = MachineControls.parse({ ...this.controls, ...input.controls });
    return { controls: this.controls };
  }
  async depart({ machineId }: { machineId: string }) {
    this.departed.push(machineId);
  }
}
