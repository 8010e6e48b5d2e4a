// Results that finish together go to the market together: reports made in the same moment are
// sent as one `reportMany` call (up to REPORTS_PER_CALL), and each caller gets its own report's
// answer, or its own error shaped as a single report call's, so the producer loop treats a report
// the same however it was sent. The call may ask for the next tasks as well (`lease`): the
// market leases them once these reports freed their slots, so a busy worker makes one request
// per cycle instead of a report call and a lease call.
import { REPORTS_PER_CALL, type Lease, type LeaseRequest, type ReportManyRequest, type ReportManyResponse, type ReportRequest, type ReportResponse } from "./api.ts";

interface Pending {
  report: ReportRequest;
  resolve: (answer: ReportResponse) => void;
  reject: (e: unknown) => void;
}

/** A refusal of one report of a batch, carrying the market's answer as a failed call carries it (`data`). */
export class ReportRefused extends Error {
  constructor(readonly data: { code: string; reason?: { code: string } | undefined }, message: string) {
    super(message);
  }
}

const outputBytes = (r: ReportRequest) => r.stdout.length + r.stderr.length;

/** A market without `reportMany` answers NOT_FOUND with no reason of its own: no such procedure. */
const noSuchProcedure = (e: unknown) => {
  const data = (e as { data?: { code?: unknown; reason?: unknown } | null } | null)?.data;
  return data?.code === "NOT_FOUND" && !data.reason;
};

/** The next tasks asked for in a report call: what to ask, given the reports about to be sent, and where the leases go. */
export interface LeaseWithReports {
  /** The lease to ask for once these reports are in (null: none now). */
  ask(reports: ReportRequest[]): LeaseRequest | null;
  /** The leases the call brought (none when it failed or the market leased nothing), for the lease asked. */
  leased(leases: Lease[], asked: LeaseRequest): void;
}

/** After the events of this turn of the event loop: at once in Node, the next timer in a browser. */
const soon: (f: () => void) => void = typeof setImmediate === "function" ? (f) => void setImmediate(f) : (f) => void setTimeout(f, 0);

export function batchReports(
  send: (input: ReportManyRequest) => Promise<ReportManyResponse>,
  single: (report: ReportRequest) => Promise<ReportResponse>,
  lease?: LeaseWithReports,
): (report: ReportRequest) => Promise<ReportResponse> {
  let pending: Pending[] = [];
  let scheduled = false;
  // An older market takes reports one by one: learned from its first answer, kept from then on.
  let one = false;
  const flush = () => {
    scheduled = false;
    // The lease rides on the last call of the flush, counting the slots all of its reports free.
    const reports = pending.map((p) => p.report);
    while (pending.length) {
      const batch: Pending[] = [];
      let bytes = 0;
      while (pending.length && batch.length < REPORTS_PER_CALL.max && (batch.length === 0 || bytes + outputBytes(pending[0]!.report) <= REPORTS_PER_CALL.outputBytes)) {
        bytes += outputBytes(pending[0]!.report);
        batch.push(pending.shift()!);
      }
      const asked = pending.length === 0 ? (lease?.ask(reports) ?? null) : null;
      void send({ reports: batch.map((p) => p.report), ...(asked ? { lease: asked } : {}) }).then(
        ({ answers, leases }) => {
          // The new tasks start before the reports' slots are let go, so the loop does not ask for them again.
          if (asked) lease!.leased(leases ?? [], asked);
          batch.forEach((p, i) => {
            const a = answers[i];
            if (!a) p.reject(new Error("the market answered fewer reports than were sent"));
            else if (a.error) p.reject(new ReportRefused({ code: a.error.code, reason: a.error.reason }, a.error.message));
            else p.resolve({ accepted: a.accepted, ...(a.reason ? { reason: a.reason } : {}) });
          });
        },
        (e: unknown) => {
          if (asked) lease!.leased([], asked);
          if (!noSuchProcedure(e)) return batch.forEach((p) => p.reject(e));
          one = true;
          for (const p of batch) single(p.report).then(p.resolve, p.reject);
        },
      );
    }
  };
  return (report) =>
    one
      ? single(report)
      : new Promise<ReportResponse>((resolve, reject) => {
      pending.push({ report, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        // Reports of tasks that finished in the same moment join this call.
        soon(flush);
      }
    });
}
