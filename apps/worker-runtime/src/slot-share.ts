// One machine's slots shared by several producer loops, one a Market Manager it is offered to
// (the Java Market paper, section 4.4: the schedulers' subsets of producers may intersect). Each
// manager sees the machine's whole slots and knows nothing of the others' tasks, so the machine
// itself keeps the count: a loop asks its manager for at most the slots no loop holds or is
// asking for, and the managers together never give it more tasks than it has slots.

/** What one loop holds now: its leases, the leases it is asking for, its resting slots. */
export type SlotLoad = () => number;

export class SlotShare {
  private loads = new Set<SlotLoad>();
  private waiting: (() => void)[] = [];

  /** A loop joins with what it holds; the function returned leaves. */
  join(load: SlotLoad): () => void {
    this.loads.add(load);
    return () => {
      this.loads.delete(load);
      this.changed();
    };
  }

  /** What every other loop holds now. */
  others(load: SlotLoad): number {
    let n = 0;
    for (const l of this.loads) if (l !== load) n += l();
    return n;
  }

  /** Resolves the next time a loop lets a slot go: a loop waiting for room asks its manager again. */
  freed(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** A loop let a slot go (a task ended, an ask came back with fewer leases than it asked for). */
  changed(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) w();
  }
}
