// What a machine knows of itself that the market cannot: whether its weekly schedule lets it work
// now and whether its owner is using it. The producer loop reads a LocalConditionsSource every
// second; the browser and Node give their own sense of "the owner is idle" (see browser-idle.ts in
// apps/web, node/cpu-load.ts).
import type { LocalConditions, MachineControls } from "./machine-controls.ts";
import { inSchedule } from "./schedule.ts";

export interface OwnerActivity {
  /** True: the owner is not using the machine; false: they are; null: the machine cannot tell. */
  ownerIdle(controls: MachineControls): boolean | null;
  /** Stops whatever the source watches with (timers, listeners). */
  close?(): void;
}

/** The local conditions under these controls at `at`. */
export function localConditions(controls: MachineControls, activity: OwnerActivity | undefined, at: Date): LocalConditions {
  return {
    inSchedule: inSchedule(controls.schedule, at),
    ownerIdle: controls.onlyIdle && activity ? activity.ownerIdle(controls) : null,
  };
}

/** What the worker tells the market: its own conditions let it offer its capacity (a pause is the market's to know). */
export function locallyAvailable(controls: MachineControls, local: LocalConditions): boolean {
  return local.inSchedule && !(controls.onlyIdle && local.ownerIdle === false);
}
