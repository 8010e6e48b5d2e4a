// Exponential resource costs (the Java Market paper, sections 4.1 and 4.3) and the marginal cost of placing one
// task on one machine, exactly as docs/DESIGN.md "The economics" defines them.

/** the Java Market paper, section 4.3: a resource used at `usage` of `max` costs n^(usage/max). */
export function resourceCost(n: number, usage: number, max: number): number {
  return Math.pow(n, usage / max);
}

/** Cost after adding `demand` minus cost before: increasing and convex in usage. */
export function resourceMarginalCost(n: number, usage: number, max: number, demand: number): number {
  return marginalCostLn(Math.log(n), usage, max, demand);
}

/**
 * The same with ln(n) given: n^((usage + demand)/max) - n^(usage/max) written as
 * n^(usage/max) x (n^(demand/max) - 1), one exp and one expm1 instead of two powers. The
 * placement search calls it for every candidate machine; expm1 also keeps a small demand's cost
 * exact where the difference of two nearly equal powers would cancel.
 */
export function marginalCostLn(lnN: number, usage: number, max: number, demand: number): number {
  return Math.exp((lnN * usage) / max) * Math.expm1((lnN * demand) / max);
}

/**
 * The slope of n^(usage/max) at `usage`: ln(n) n^(usage/max) / max, with ln(n) given. A small
 * extra demand d costs about d times this; since e^x - 1 >= x, d times the slope is a lower bound
 * of the exact marginal cost, which is what the placement search's pruning keys and the purchase
 * rule's unit price rely on.
 */
export function resourceCostSlopeLn(lnN: number, usage: number, max: number): number {
  return (lnN * Math.exp((lnN * usage) / max)) / max;
}

/** What placing a task costs on one machine, split by resource, as data for explanations. */
export interface MarginalCost {
  /** Abstract cost units (docs/DESIGN.md: compute backlog over H). */
  compute: number;
  /** Abstract cost units: memory of running tasks over the machine's memory. */
  memory: number;
  /** Abstract cost units: bytes committed on the market's link over link capacity x H. */
  network: number;
  /** (compute + memory + network) x the price constant P, in credits. */
  credits: number;
  /** Expected payment to an opportunistic producer, cps x w / v, in credits. */
  payment: number;
  /** credits + payment. */
  total: number;
}

export interface MarginalCostInput {
  /** Number of machines in the market (at least 2). */
  n: number;
  priceConstant: number;
  horizonSeconds: number;
  linkBytesPerSecond: number;
  /** Machine: committed backlog in seconds, aggregate capacity (speed x slots), slot speed. */
  backlogSeconds: number;
  capacity: number;
  speed: number;
  memoryUsedMb: number;
  memoryMaxMb: number;
  pricePerSecond: number;
  /** Market: bytes committed on its link. */
  committedBytes: number;
  /** Task demand. */
  work: number;
  memoryMb: number;
  bytes: number;
}

export function marginalCost(i: MarginalCostInput): MarginalCost {
  const n = Math.max(2, i.n);
  const H = i.horizonSeconds;
  const compute = resourceMarginalCost(n, i.backlogSeconds, H, i.work / i.capacity);
  const memory = resourceMarginalCost(n, i.memoryUsedMb, i.memoryMaxMb, i.memoryMb);
  const network = resourceMarginalCost(n, i.committedBytes, i.linkBytesPerSecond * H, i.bytes);
  const credits = unitsToCredits(compute + memory + network, i.priceConstant);
  const payment = expectedPayment(i.pricePerSecond, i.work, i.speed);
  return { compute, memory, network, credits, payment, total: credits + payment };
}

/** Abstract cost units to credits by the market's price constant P (credits per cost unit). */
export function unitsToCredits(costUnits: number, priceConstant: number): number {
  return costUnits * priceConstant;
}

/** the Java Market paper, section 5.5.2: an opportunistic machine is paid cps per second of successful use. */
export function expectedPayment(pricePerSecond: number, work: number, speed: number): number {
  return (pricePerSecond * work) / speed;
}

/**
 * A default price constant derived from producers' asking prices: a machine filled for a whole
 * horizon costs n - 1 units, so valuing that at what producers ask for H seconds gives
 * P = mean(cps x slots) x H / (n - 1).
 */
export function defaultPriceConstant(pricesPerSecond: readonly number[], horizonSeconds: number): number {
  if (pricesPerSecond.length === 0) return 1;
  const mean = pricesPerSecond.reduce((a, b) => a + b, 0) / pricesPerSecond.length;
  const n = Math.max(2, pricesPerSecond.length);
  return mean > 0 ? (mean * horizonSeconds) / (n - 1) : 1;
}
