import { DepartRequest, HeartbeatRequest, LeaseRequest, ModuleRequest, OfferRequest, RegisterRequest, ReportAndLeaseRequest, ReportManyRequest, WhereIsRequest } from "@cyclemarket/worker-runtime";
import { liveManagers, whereIs } from "../../market/managers.ts";
import { router, workerProcedure } from "../trpc.ts";
import { departMachine, ownMachine, registerMachine } from "../../resources/machines.ts";
import { checkReport, heartbeat, leaseTasks, reportAndLease, reportMany } from "../../resources/leases.ts";
import { setMachineControls } from "../../resources/controls.ts";
import { leasesModule } from "../../tasks/module-rights.ts";
import { probeModule, probeModuleHash } from "../../resources/probes.ts";
import { refuse } from "../errors.ts";

// The wire messages of the producer protocol: one schema per message, shared with the workers.
export const workerRouter = router({
  register: workerProcedure.input(RegisterRequest).mutation(({ ctx, input, signal }) => registerMachine(ctx.services.market, ctx.caller, input, signal, ctx.network ?? null)),
  lease: workerProcedure.input(LeaseRequest).mutation(({ ctx, input, signal }) => leaseTasks(ctx.services.market, ctx.caller, input.machineId, input.max, signal)),
  /** A module's bytes, only to a producer one of whose machines holds a live lease of a task running it; anyone else hears "no such module". */
  module: workerProcedure.input(ModuleRequest).query(async ({ ctx, input }) => {
    const { market, modules } = ctx.services;
    const hash = input.moduleHash.toLowerCase();
    if (!leasesModule(market.state, ctx.caller.id, hash, market.clock.now(), input.machineId)) throw refuse.notFound("module");
    if (hash === probeModuleHash()) return { bytes: Buffer.from(probeModule()).toString("base64") };
    return { bytes: await modules.base64(hash) };
  }),
  heartbeat: workerProcedure
    .input(HeartbeatRequest)
    .mutation(({ ctx, input }) => heartbeat(ctx.services.market, ctx.caller, input.machineId, input.leaseIds)),
  /** One result; with `lease`, the next tasks in the same answer, leased once the result is in. */
  report: workerProcedure
    .input(ReportAndLeaseRequest)
    .mutation(async ({ ctx, input: { lease, ...report }, signal }) => reportAndLease(ctx.services.market, ctx.caller, checkReport(ctx.services.market, ctx.caller, report), lease, signal)),
  /** Several results in one call, each answered on its own; they join the same group commit, and the next leases may come in the answer. */
  reportMany: workerProcedure.input(ReportManyRequest).mutation(({ ctx, input, signal }) => reportMany(ctx.services.market, ctx.caller, input.reports, signal, input.lease)),
  /** The capacity the machine offers now: its own conditions, and any change to its controls. */
  offer: workerProcedure.input(OfferRequest).mutation(async ({ ctx, input }) => {
    const { controls } = await setMachineControls(ctx.services.market, ctx.caller, input.machineId, { available: input.available, controls: input.controls });
    return { controls };
  }),
  /** Which manager holds the caller's machine now: asked by a worker whose manager stopped answering. */
  whereIs: workerProcedure.input(WhereIsRequest).query(({ ctx, input }) => whereIs(ctx.services.market, ctx.caller.id, input.machineId)),
  /** The live managers, the most room first: asked by a worker that offers its machine to several. */
  managers: workerProcedure.query(({ ctx }) => liveManagers(ctx.services.market)),
  depart: workerProcedure.input(DepartRequest).mutation(async ({ ctx, input }) => {
    const market = ctx.services.market;
    await market.serial(async () => {
      ownMachine(market, ctx.caller, input.machineId);
      await departMachine(market, input.machineId, "left");
    });
    return { departed: true };
  }),
});
