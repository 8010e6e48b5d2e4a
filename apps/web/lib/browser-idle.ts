"use client";
// "Only while I am not using this computer" in a browser: the owner counts as away while this
// page is hidden (another tab, minimised), or, where the browser grants the Idle Detection API,
// while they have not touched the keyboard or mouse for a minute or the screen is locked.
import type { OwnerActivity } from "@cyclemarket/worker-runtime/browser";

interface IdleDetectorLike extends EventTarget {
  userState: "active" | "idle" | null;
  screenState: "locked" | "unlocked" | null;
  start(options: { threshold: number; signal: AbortSignal }): Promise<void>;
}
interface IdleDetectorClass {
  new (): IdleDetectorLike;
  requestPermission(): Promise<"granted" | "denied">;
}

const idleDetectorClass = () => (globalThis as { IdleDetector?: IdleDetectorClass }).IdleDetector;

/** Whether this browser has the Idle Detection API at all. */
export const hasIdleDetection = () => typeof idleDetectorClass() === "function";

/** The user's activity as this page can see it; `detectIdle` asks for the Idle Detection permission (needs a click). */
export function createBrowserActivity(): OwnerActivity & { detectIdle(): Promise<boolean>; using(): "idle-detection" | "visibility" } {
  let detector: IdleDetectorLike | null = null;
  const stop = new AbortController();
  return {
    ownerIdle: () => {
      if (document.visibilityState === "hidden") return true;
      if (detector?.userState) return detector.userState === "idle" || detector.screenState === "locked";
      return false;
    },
    using: () => (detector ? "idle-detection" : "visibility"),
    async detectIdle() {
      const Detector = idleDetectorClass();
      if (!Detector || detector) return detector !== null;
      try {
        if ((await Detector.requestPermission()) !== "granted") return false;
        const d = new Detector();
        // The API's smallest threshold is one minute.
        await d.start({ threshold: 60_000, signal: stop.signal });
        detector = d;
        return true;
      } catch {
        return false;
      }
    },
    close: () => stop.abort(),
  };
}
