/**
 * A machine's queue of task ids, in the order they will be handed out, where every step a lease
 * or a report takes costs the same however long the queue: a task joins at the back, leaves from
 * anywhere by its id (a lease taking the front, a task moved, cancelled or taken by an idle
 * machine), and the front or the back is read without a walk over the rest.
 *
 * An array would make each of those a search or a move of the whole queue: a lease taking 32
 * tasks from the front of a 10,000-task queue moved the other 9,968 ids down. Here an id that
 * leaves becomes a hole in the array, found by its position in `at`; holes at the front are
 * skipped as the front moves, and the array is packed again once holes are half of it, so each
 * id is moved a bounded number of times however it leaves.
 */
export class TaskQueue implements Iterable<string> {
  private ids: (string | undefined)[] = [];
  /** Where each id is, counted from the first slot ever used (`offset` slots dropped from the array since). */
  private at = new Map<string, number>();
  private offset = 0;
  private head = 0;

  static of(ids: Iterable<string>): TaskQueue {
    const q = new TaskQueue();
    for (const id of ids) q.push(id);
    return q;
  }

  get length(): number {
    return this.at.size;
  }

  /** At the back. An id already queued here stays where it is. */
  push(id: string): void {
    if (this.at.has(id)) return;
    this.at.set(id, this.offset + this.ids.length);
    this.ids.push(id);
  }

  /** Takes the id out wherever it is; false if it was not queued here. */
  delete(id: string): boolean {
    const slot = this.at.get(id);
    if (slot === undefined) return false;
    this.at.delete(id);
    this.ids[slot - this.offset] = undefined;
    while (this.head < this.ids.length && this.ids[this.head] === undefined) this.head++;
    if (this.head === this.ids.length) this.clear();
    else if (this.ids.length - this.at.size > Math.max(32, this.at.size)) this.pack();
    return true;
  }

  /** From the front, in order. */
  *[Symbol.iterator](): Iterator<string> {
    for (let i = this.head; i < this.ids.length; i++) {
      const id = this.ids[i];
      if (id !== undefined) yield id;
    }
  }

  /** From the back, the last first, stopping before the `from`-th id from the front (0: the whole queue). */
  *fromBack(from = 0): Generator<string> {
    let left = this.at.size - from;
    for (let i = this.ids.length - 1; i >= this.head && left > 0; i--) {
      const id = this.ids[i];
      if (id === undefined) continue;
      left--;
      yield id;
    }
  }

  private clear() {
    this.offset += this.ids.length;
    this.ids = [];
    this.head = 0;
  }

  /** Drops the holes: every id gets its slot again, counted on from the last one used. */
  private pack() {
    const live: string[] = [];
    for (let i = this.head; i < this.ids.length; i++) {
      const id = this.ids[i];
      if (id !== undefined) live.push(id);
    }
    this.offset += this.ids.length;
    this.ids = live;
    this.head = 0;
    for (let i = 0; i < live.length; i++) this.at.set(live[i]!, this.offset + i);
  }
}
