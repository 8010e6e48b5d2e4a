// For one task, what a node of the machine tree (state/machine-tree.ts) says about every machine
// under it: that none can take the task, and by which check, or a lower bound of what any of them
// would cost. The bound is the cost of a machine that would have every best figure of the node at
// once (most capacity and memory, least load and price), worked out with the very operations that
// scoring.ts uses for one machine: each operation rounds monotonically, so no machine's cost comes
// out below it, and a node of identical machines bounds them at exactly their cost (ties then still
// go to the lowest row without visiting every twin).
import { FIELDS, MachineTree } from "../state/machine-tree.ts";
import type { SearchContext } from "./context.ts";
import type { Exclusion, TaskShape } from "./feasibility.ts";

const { AC_MIN, AQ_MIN, AT_MAX, AVAIL, B_MIN, BW_MAX, CAP_MAX, C_MIN, DEP_MAX, FREE, MEM_MAX, MEM_USED_MIN, PPW_MIN, PRICE_MIN, Q_MIN, REP_MAX, R_MAX, SLOT_MEM_MAX, SPEED_MAX } = FIELDS;
const F = MachineTree.F;
const I = MachineTree.I;
/** price / speed x work may round a little above price x work / speed: this keeps it below. */
const BELOW = 1 - 2 ** -48;

export class NodeBound {
  /** Why the last node ruled out was ruled out. */
  no: Exclusion | undefined = undefined;
  /** Some node was ruled out by its machines' departure (its finish depends on the task's bytes). */
  departures = false;
  private readonly work: number;
  private readonly memoryMb: number;
  private readonly bytes: number;
  private readonly now: number;
  private readonly lnN: number;
  private readonly H: number;
  private readonly P: number;
  private readonly bounded: boolean;
  private readonly minReputation: number;

  constructor(ctx: SearchContext, task: TaskShape, private readonly deadlineAt: number) {
    this.work = task.work;
    this.memoryMb = task.memoryMb;
    this.bytes = task.bytes;
    this.now = ctx.now;
    this.lnN = ctx.lnN;
    this.H = ctx.H;
    this.P = ctx.P;
    this.bounded = ctx.bounded;
    this.minReputation = ctx.minReputation;
  }

  /**
   * A lower bound (>= 0) of the cost of every machine under `v` that can take the task, or -1 with
   * `no` set when the node's figures show that none can. The checks come in feasibility.ts's order.
   */
  bound(tree: MachineTree, v: number): number {
    const f = tree.f;
    const b = v * F;
    const a = v * I;
    const w = this.work;
    const mem = this.memoryMb;
    if (tree.i[a + AVAIL] === 0) return this.out("unavailable");
    if (mem > f[b + SLOT_MEM_MAX]!) return this.out("memory");
    if (f[b + REP_MAX]! < this.minReputation) return this.out("reputation");
    // No backlog under the node is below this at `now`: it drains at most along its line (with a
    // margin far above the rounding of the machines' own figures).
    const t = Math.max(this.now, f[b + AT_MAX]!, 0);
    const c = f[b + C_MIN]!;
    const r = f[b + R_MAX]!;
    const backlog = Math.max(f[b + Q_MIN]!, c - r * t - (1e-9 * (Math.abs(c) + r * t) + 1e-12), 0);
    const start = tree.i[a + FREE]! > 0 ? this.now : this.now + backlog;
    const finish = start + w / f[b + SPEED_MAX]! + this.bytes / f[b + BW_MAX]!;
    if (finish > f[b + DEP_MAX]!) {
      this.departures = true;
      return this.out("departure");
    }
    if (finish > this.deadlineAt) return this.out("deadline");
    const H = this.H;
    if (this.bounded && backlog + Math.min(w / f[b + CAP_MAX]!, H / 2) > H) return this.out("horizon");
    if (this.bounded && mem > 0 && f[b + MEM_USED_MIN]! + mem > f[b + MEM_MAX]!) return this.out("memoryFull");
    const capMax = f[b + CAP_MAX]!;
    const memMax = f[b + MEM_MAX]!;
    const lnN = this.lnN;
    // marginalCostLn (cost.ts) written out, so both bounds share its two n^x - 1 factors.
    const growCompute = Math.expm1((lnN * (w / capMax)) / H);
    const growMemory = mem > 0 ? Math.expm1((lnN * mem) / memMax) : 0;
    const payment = Math.max((f[b + PRICE_MIN]! * w) / f[b + SPEED_MAX]!, f[b + PPW_MIN]! * w * BELOW);
    // The bound of a machine with the best of each figure: exact for a node of twins.
    const compute = Math.exp((lnN * backlog) / H) * growCompute;
    const memory = mem > 0 ? Math.exp((lnN * f[b + MEM_USED_MIN]!) / memMax) * growMemory : 0;
    const twin = this.P * (compute + memory) + payment;
    // A tighter one where loads and sizes differ: a machine's compute cost is e^A x g(capacity),
    // A = ln n x backlog / H - ln capacity and g(c) = c (n^(w / (c H)) - 1) falling in c, so at
    // least e^(least A) x g(most capacity); the memory cost likewise with B. A is the least at
    // `now` along each machine's line (its backlog drains at most at its rate).
    const lr = tree.lnRef / H;
    const line = f[b + AC_MIN]! - lr * r * t;
    const A = Math.max(f[b + AQ_MIN]!, line) - 1e-9 * (1 + Math.abs(line) + lr * r * t);
    const computeA = Math.exp(A) * capMax * growCompute;
    const memoryB = mem > 0 ? Math.exp(f[b + B_MIN]! - 1e-9) * memMax * growMemory : 0;
    const loads = (this.P * (computeA + memoryB) + payment) * (1 - 1e-12);
    const lb = loads > twin ? loads : twin;
    // Not a number (an overflow times zero): no bound, the node is searched.
    return lb >= 0 ? lb : 0;
  }

  private out(no: Exclusion): number {
    this.no = no;
    return -1;
  }
}
