// Builders shared by the unit tests (not exported from the package).
import type { BenefitCurve } from "./benefit.ts";
import type { JobInput } from "./job.ts";
import { Job } from "./job.ts";
import type { MachineProfileInput } from "./machine.ts";
import { MarketState } from "./state/market-state.ts";
import type { MarketSettingsInput } from "./settings.ts";

export function opp(id: string, o: Partial<Extract<MachineProfileInput, { kind: "opportunistic" }>> = {}): MachineProfileInput {
  return { id, kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 1024, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0, ...o };
}

export function market(machines: MachineProfileInput[], settings: MarketSettingsInput = {}, now = 0): MarketState {
  const s = new MarketState({ horizonSeconds: 100, priceConstant: 1, ...settings });
  for (const m of machines) s.upsertMachine(m, now);
  return s;
}

export function job(id: string, benefit: BenefitCurve, tasks: Array<Partial<{ id: string; work: number; memoryMb: number; bytes: number }>> = [{}], extra: Partial<JobInput> = {}): Job {
  return Job.parse({
    id,
    arrivedAt: 0,
    benefit,
    tasks: tasks.map((t, i) => ({ id: t.id ?? `${id}.t${i}`, work: t.work ?? 10, memoryMb: t.memoryMb ?? 0, bytes: t.bytes ?? 0 })),
    ...extra,
  });
}
