import { z } from "zod";
import { MachineControlsPatch, storableText } from "@cyclemarket/worker-runtime";
import { producerProcedure, router } from "../trpc.ts";
import { listOwnMachines, setMachineControls } from "../../resources/controls.ts";
import { goingRate } from "../../resources/going-rate.ts";
import { ownStanding } from "../../market/standing.ts";

export const SetMachineControls = z.object({
  machineId: storableText(100, "A machine id"),
  controls: MachineControlsPatch,
});
export type SetMachineControls = z.infer<typeof SetMachineControls>;

export const GoingRate = z.object({ speed: z.number().positive().max(1000).nullish() });
export type GoingRate = z.infer<typeof GoingRate>;

// A producer's own machines and their controls, for /produce and for scripts (a produce token).
export const machinesRouter = router({
  list: producerProcedure.query(({ ctx }) => listOwnMachines(ctx.services.market, ctx.caller)),
  /** What other producers' machines (of a speed like this one's) ask and earned in the last hour: beside the price field on /produce. */
  goingRate: producerProcedure
    .input(GoingRate)
    .query(({ ctx, input }) => goingRate(ctx.services.market, ctx.services.database.reads, ctx.caller.id, input.speed ?? null, ctx.services.clock.now())),
  /** The caller's standing as a producer and what raises it (the engine's answer on the facts the market recorded). */
  standing: producerProcedure.query(({ ctx }) => ownStanding(ctx.services.market, ctx.services.db, ctx.caller.id)),
  /** Pause, resume, limit: the market applies it at once; the machine's worker hears it at its next heartbeat. */
  setControls: producerProcedure.input(SetMachineControls).mutation(({ ctx, input }) =>
    setMachineControls(ctx.services.market, ctx.caller, input.machineId, { controls: input.controls }),
  ),
});
