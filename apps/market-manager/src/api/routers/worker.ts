import { z } from "zod";
import { router, workerProcedure } from "../trpc.ts";
import { refuse } from "../errors.ts";
import { departMachine, ownMachine, registerMachine } from "../../resources/machines.ts";
import { heartbeat, leaseTasks, reportResult } from "../../resources/leases.ts";

// The wire messages of the producer protocol (register, lease, heartbeat, report, depart).
// TODO(unify): these move to the worker runtime's catalog so both ends share one schema.
export const RegisterMachine = z.object({
  name: z.string().trim().min(1).max(80),
  kind: z.enum(["opportunistic", "dedicated"]).default("opportunistic"),
  slots: z.number().int().min(1).max(256),
  speed: z.number().finite(),
  memoryPerSlotMb: z.number().int().min(16).max(1_048_576),
  bandwidthBytesPerSecond: z.number().finite().min(0).max(1e12).default(0),
  pricePerSecond: z.number().finite().default(0),
  userAgent: z.string().max(1000).default(""),
});
export const LeaseRequest = z.object({ machineId: z.string().uuid(), max: z.number().int().min(1).max(256) });
export const ModuleRequest = z.object({ moduleHash: z.string().regex(/^[0-9a-f]{64}$/) });
export const HeartbeatRequest = z.object({ machineId: z.string().uuid(), leaseIds: z.array(z.string().uuid()).max(1024) });
export const ReportRequest = z.object({
  machineId: z.string().uuid(),
  leaseId: z.string().uuid(),
  exitCode: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
  outputHash: z.string().regex(/^[0-9a-f]{64}$/),
  elapsedMs: z.number().finite().min(0),
  error: z.object({ code: z.string().max(64), message: z.string().max(2000).optional() }).optional(),
});
export const DepartRequest = z.object({ machineId: z.string().uuid() });

export const workerRouter = router({
  register: workerProcedure.input(RegisterMachine).mutation(({ ctx, input }) => registerMachine(ctx.services.market, ctx.caller, input)),
  lease: workerProcedure.input(LeaseRequest).mutation(({ ctx, input }) => leaseTasks(ctx.services.market, ctx.caller, input.machineId, input.max)),
  module: workerProcedure.input(ModuleRequest).query(async ({ ctx, input }) => {
    const row = await ctx.services.db.module.findUnique({ where: { hash: input.moduleHash }, select: { bytes: true } });
    if (!row) throw refuse.notFound("module");
    return { bytes: Buffer.from(row.bytes).toString("base64") };
  }),
  heartbeat: workerProcedure
    .input(HeartbeatRequest)
    .mutation(({ ctx, input }) => heartbeat(ctx.services.market, ctx.caller, input.machineId, input.leaseIds)),
  report: workerProcedure.input(ReportRequest).mutation(({ ctx, input }) => reportResult(ctx.services.market, ctx.caller, input)),
  depart: workerProcedure.input(DepartRequest).mutation(async ({ ctx, input }) => {
    const market = ctx.services.market;
    await market.serial(async () => {
      ownMachine(market, ctx.caller, input.machineId);
      await departMachine(market, input.machineId, "left");
    });
    return { departed: true };
  }),
});
