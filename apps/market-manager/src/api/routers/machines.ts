import { z } from "zod";
import { MachineControlsPatch, storableText } from "@cyclemarket/worker-runtime";
import { producerProcedure, router } from "../trpc.ts";
import { listOwnMachines, setMachineControls } from "../../resources/controls.ts";

export const SetMachineControls = z.object({
  machineId: storableText(100, "A machine id"),
  controls: MachineControlsPatch,
});
export type SetMachineControls = z.infer<typeof SetMachineControls>;

// A producer's own machines and their controls, for /produce and for scripts (a produce token).
export const machinesRouter = router({
  list: producerProcedure.query(({ ctx }) => listOwnMachines(ctx.services.market, ctx.caller)),
  /** Pause, resume, limit: the market applies it at once; the machine's worker hears it at its next heartbeat. */
  setControls: producerProcedure.input(SetMachineControls).mutation(({ ctx, input }) =>
    setMachineControls(ctx.services.market, ctx.caller, input.machineId, { controls: input.controls }),
  ),
});
