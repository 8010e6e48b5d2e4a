import { z } from "zod";
import { consumerProcedure, publicProcedure, requireScope, router, signedInProcedure } from "../trpc.ts";
import { refuse } from "../errors.ts";
import { SubmitJob, quoteJob, submitJob, tasksIn, type Submission } from "../../tasks/jobs.ts";
import { keepRawCall, keepRawSubmission, sendCancel, sendSubmission, shopQuote, type RawCall } from "../../market/shopping.ts";
import { StagedSubmission, intakePoolOf } from "../../tasks/intake-pool.ts";
import type { Context } from "../trpc.ts";
import type { Services } from "../../services.ts";
import { EXAMPLES } from "../../tasks/examples.ts";
import { jobList, jobPage, outputsOf, progressOf, splitParts } from "../../tasks/split-view.ts";
import { cancelWhole, checkPart, quoteSplit, roomOf, submitSplit } from "../../market/job-split.ts";
import { cancelJob } from "../../tasks/cancel.ts";
import { DecisionFilter, listDecisions } from "../../ops/decision-log.ts";
import { Sha256Hex } from "@cyclemarket/client/job-file";
import { checkQueuedTasks, perMinute } from "../limit-procedures.ts";
import { jobFileOf } from "../../tasks/job-file-view.ts";
import { mayUseModule, shippedModule } from "../../tasks/module-rights.ts";
import { watchJob, jobResults } from "../live/job.ts";
import { userStream } from "./live.ts";

export const ModuleRef = z.object({ hash: Sha256Hex });
export type ModuleRef = z.infer<typeof ModuleRef>;

/**
 * A submission's input: parsed by an intake thread when the server held its body (http/held-body.ts),
 * else checked here with the same schema. Typed for clients as the schema's input.
 */
const SubmissionInput = {
  _input: undefined as unknown as z.input<typeof SubmitJob>,
  _output: undefined as unknown as Submission,
  parse: (raw: unknown): Submission => (raw instanceof StagedSubmission ? raw : SubmitJob.parse(raw)),
};

/** After the caller's quota checks: a held body goes to an intake thread (`keep`: its tasks wait there to be stored). */
const offThread = async (ctx: Context, keep: boolean) => {
  const held = ctx.heldBody;
  return held ? intakePoolOf(ctx.services.market).prepare(held.bytes, { batch: held.batch, keep, maxModuleBytes: ctx.services.config.MAX_MODULE_BYTES }) : null;
};

export const JobRef = z.object({ jobId: z.string().uuid("Not a job id.") });

/** The job's owner, or an admin; anyone else is told the job does not exist. A token needs `consume`. */
export const jobOwnerProcedure = signedInProcedure.input(JobRef).use(async ({ ctx, input, next }) => {
  requireScope(ctx.caller, "consume");
  const ownerId = await ownerOf(ctx.services, input.jobId);
  if (!ownerId || (ownerId !== ctx.caller.id && !ctx.caller.roles.includes("admin"))) throw refuse.notFound("job");
  return next();
});

/**
 * A job's owner: from memory for a job the market holds live or lately let go (a job page asks
 * every second), else from PostgreSQL, and then kept, as an owner never changes.
 */
async function ownerOf(services: Services, jobId: string): Promise<string | null> {
  const { state } = services.market;
  const known = state.ownerOf(jobId);
  if (known) return known;
  const job = await services.db.job.findUnique({ where: { id: jobId }, select: { ownerId: true } });
  if (!job) return null;
  state.keepOwner(jobId, job.ownerId);
  return job.ownerId;
}

/** A stream of the owner's job over server-sent events, counted against the user's open streams. */
const jobStreamProcedure = jobOwnerProcedure.input(z.object({ lastEventId: z.string().nullish() })).use(({ ctx, signal, next }) => userStream(ctx, signal, next));

/**
 * A submission of a split quote: split by the manager reached, with the consumer's raw call to send
 * each part on. Without the raw call (one live manager, or a call another manager sent on) it
 * cannot be split, and is refused: the consumer quotes again.
 */
async function submitSplitted(ctx: Context & { rawCall: RawCall | null }, input: Submission, parts: { manager: string }[]) {
  const { market, config } = ctx.services;
  if (!ctx.rawCall) {
    if (input instanceof StagedSubmission) input.drop();
    const gone = parts.find((p) => p.manager !== market.managerId)?.manager ?? market.managerId;
    throw refuse.conflict({ code: "manager-not-live", managerId: gone }, `A split job needs every Market Manager it names live; ${gone} is not: quote the job again.`);
  }
  return submitSplit(market, ctx, input, ctx.rawCall, config.MAX_MODULE_BYTES, config.MARKET_QUOTE_SHOP_TIMEOUT_MS) as unknown as Awaited<ReturnType<typeof submitJob>>;
}

/** A quote's procedure: its quota, its raw input kept for the other managers, a big body parsed off the market's thread. */
const quoteProcedure = consumerProcedure
  .use(({ ctx, next }) => (perMinute("quotes-per-minute", ctx.services.config.QUOTES_PER_MINUTE, ctx.services.quotas.quote(ctx.caller.id)), next()))
  .use(async ({ ctx, getRawInput, next }) => next({ ctx: { rawCall: await keepRawCall(ctx.services.market, ctx, getRawInput) } }))
  .use(async ({ ctx, next }) => {
    const staged = await offThread(ctx, false);
    return staged ? next({ getRawInput: async () => staged }) : next();
  })
  .input(SubmissionInput);

export const jobsRouter = router({
  examples: publicProcedure.query(() =>
    Object.values(EXAMPLES).map((e) => ({
      name: e.name,
      title: e.title,
      description: e.description,
      defaultParams: e.params.parse({}) as Record<string, unknown>,
      defaultWorkPerTask: e.defaultWorkPerTask,
    })),
  ),
  /**
   * What the market would decide now, committing nothing. With several Market Managers, the best
   * of every live manager's quote (market/shopping.ts), with the manager that made it (`manager`)
   * and, when several answered, every offer compared (`offers`).
   */
  quote: quoteProcedure.mutation(async ({ ctx, input }) => {
    const { market, config } = ctx.services;
    const local = { ...(await quoteJob(market, ctx.caller, input, config.MAX_MODULE_BYTES)), room: roomOf(market) };
    const best = await shopQuote(market, ctx, local, ctx.rawCall, config.MARKET_QUOTE_SHOP_TIMEOUT_MS);
    // No manager admits the whole job now: several together may (market/job-split.ts), unless
    // the consumer's balance is what is short (the parts' escrows add up to the whole's).
    const whole = input instanceof StagedSubmission ? input.head : input;
    const unsplit = { ...best, split: null };
    const short = best.reasons.some((r) => r.code === "insufficient-credits");
    if (best.outcome === "admitted" || short || !ctx.rawCall || !best.offers || whole.part) return unsplit;
    const rooms = best.offers.map((o) => ({ manager: o.manager, room: o.room ?? 0 }));
    const split = await quoteSplit<Extract<typeof local, { outcome: "admitted" }>>(market, ctx, ctx.rawCall, tasksIn(input), rooms, config.MARKET_QUOTE_SHOP_TIMEOUT_MS);
    return split ? { ...split, offers: best.offers } : unsplit;
  }),
  /** This manager's own quote alone, and its room: what another manager asks when a consumer shops (market/shopping.ts). */
  quoteHere: quoteProcedure.mutation(async ({ ctx, input }) => ({
    ...(await quoteJob(ctx.services.market, ctx.caller, input, ctx.services.config.MAX_MODULE_BYTES)),
    manager: ctx.services.market.managerId,
    room: roomOf(ctx.services.market),
  })),
  submit: consumerProcedure
    .use(({ ctx, next }) => (perMinute("submissions-per-minute", ctx.services.config.SUBMISSIONS_PER_MINUTE, ctx.services.quotas.submit(ctx.caller.id)), next()))
    .use(async ({ ctx, getRawInput, next }) => next({ ctx: { rawCall: await keepRawSubmission(ctx.services.market, ctx, getRawInput) } }))
    .use(async ({ ctx, next }) => {
      const staged = await offThread(ctx, true);
      return staged ? next({ getRawInput: async () => staged }) : next();
    })
    .input(SubmissionInput)
    .mutation(async ({ ctx, input }) => {
      const { config, market } = ctx.services;
      const head = input instanceof StagedSubmission ? input.head : input;
      // The consumer took a split quote: the job is split across the managers it names.
      if (head.split) return submitSplitted(ctx, input, head.split);
      // A part of a split job, sent by the manager that split it.
      if (head.part) await checkPart(market, ctx.caller.id, head.part).catch((e: unknown) => {
        if (input instanceof StagedSubmission) input.drop();
        throw e;
      });
      // The consumer took another manager's quote: the job is that manager's.
      const named = head.manager;
      const sent = await sendSubmission(market, ctx, named, ctx.rawCall).catch((e: unknown) => {
        if (input instanceof StagedSubmission) input.drop();
        throw e;
      });
      if (sent !== null) {
        if (input instanceof StagedSubmission) input.drop();
        return sent as Awaited<ReturnType<typeof submitJob>>;
      }
      const replicas = input instanceof StagedSubmission ? input.head.replicas : input.replicas;
      try {
        await checkQueuedTasks(market, ctx.services.database.reads, ctx.caller.id, tasksIn(input) * replicas, config.QUEUED_TASKS_PER_USER);
      } catch (e) {
        if (input instanceof StagedSubmission) input.drop();
        throw e;
      }
      return submitJob(market, ctx.caller, input, config.MAX_MODULE_BYTES, ctx.network ?? null);
    }),
  /**
   * Whether the caller may name this module in a job (they uploaded its bytes, or it is a shipped
   * example's): then a second upload is not needed. Null otherwise, whether or not someone else
   * sent those bytes: the caller uploads them (free when stored) and gains the right.
   */
  module: consumerProcedure.input(ModuleRef).query(async ({ ctx, input }) => {
    const { db } = ctx.services;
    if (!(await mayUseModule(ctx.services.market, input.hash, ctx.caller.id))) return null;
    const shipped = shippedModule(input.hash);
    if (shipped) return { hash: input.hash, size: shipped.length };
    return db.module.findUnique({ where: { hash: input.hash }, select: { hash: true, size: true } });
  }),
  /** The caller's jobs, a job split across managers once (tasks/split-view.ts). */
  list: consumerProcedure.query(({ ctx }) => jobList(ctx.services.db, ctx.caller.id)),
  /** A job's page; a split job's sums its parts and lists each with its manager. */
  get: jobOwnerProcedure.query(({ ctx, input }) => jobPage(ctx.services.market, input.jobId)),
  /** When its tasks were done, against its benefit curve (the job page's chart). */
  progress: jobOwnerProcedure.query(({ ctx, input }) => progressOf(ctx.services.market, input.jobId)),
  /** The market's decisions about this job, newest first; a split job's are its parts'. */
  decisions: jobOwnerProcedure
    .input(DecisionFilter.pick({ cursor: true, pageSize: true, outcome: true }))
    .query(async ({ ctx, input }) => {
      const parts = await splitParts(ctx.services.db, input.jobId, ctx.services.market);
      return listDecisions(ctx.services.db, { ...input, jobId: input.jobId, jobIds: parts?.map((p) => p.id) });
    }),
  /** Stops the job; a split job's open parts are each stopped by their manager. */
  cancel: jobOwnerProcedure.mutation(async ({ ctx, input }) => {
    if (await splitParts(ctx.services.db, input.jobId, ctx.services.market)) return cancelWhole(ctx.services.market, ctx, input.jobId);
    // Held by another manager: that one stops it (market/shopping.ts).
    return ((await sendCancel(ctx.services.market, ctx, input.jobId)) as Awaited<ReturnType<typeof cancelJob>> | null) ?? cancelJob(ctx.services.market, input.jobId);
  }),
  outputs: jobOwnerProcedure
    .input(z.object({ fromIndex: z.number().int().min(0).default(0), limit: z.number().int().min(1).max(1000).default(200) }))
    .query(({ ctx, input }) => outputsOf(ctx.services.market, input.jobId, input.fromIndex, input.limit)),
  /** The job file that submits this job again ("Run again"): the module by hash, every task written out. */
  jobFile: jobOwnerProcedure.query(({ ctx, input }) => jobFileOf(ctx.services.db, input.jobId)),
  /** The job's view each time its status or task counts change; ends when the job has ended. */
  watch: jobStreamProcedure.subscription(({ ctx, input, signal }) => watchJob(ctx.services.market, input.jobId, signal)),
  /** Each task's output as it is accepted (bytes as base64), then `end`; resumes from its last event id. */
  streamOutputs: jobStreamProcedure.subscription(({ ctx, input, signal }) => jobResults(ctx.services.market, input.jobId, input.lastEventId ?? null, signal)),
});
