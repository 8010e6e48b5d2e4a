import { z } from "zod";
import { consumerProcedure, publicProcedure, requireScope, router, signedInProcedure } from "../trpc.ts";
import { refuse } from "../errors.ts";
import { SubmitJob, quoteJob, submitJob, tasksIn, type Submission } from "../../tasks/jobs.ts";
import { keepRawCall, keepRawSubmission, sendSubmission, shopQuote } from "../../market/shopping.ts";
import { StagedSubmission, intakePoolOf } from "../../tasks/intake-pool.ts";
import type { Context } from "../trpc.ts";
import type { Services } from "../../services.ts";
import { EXAMPLES } from "../../tasks/examples.ts";
import { jobView, jobOutputs, jobSummaries } from "../../tasks/views.ts";
import { cancelJob } from "../../tasks/cancel.ts";
import { jobProgress } from "../../tasks/progress.ts";
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
    const local = await quoteJob(ctx.services.market, ctx.caller, input, ctx.services.config.MAX_MODULE_BYTES);
    return shopQuote(ctx.services.market, ctx, local, ctx.rawCall, ctx.services.config.MARKET_QUOTE_SHOP_TIMEOUT_MS);
  }),
  /** This manager's own quote alone: what another manager asks when a consumer shops (market/shopping.ts). */
  quoteHere: quoteProcedure.mutation(async ({ ctx, input }) => ({
    ...(await quoteJob(ctx.services.market, ctx.caller, input, ctx.services.config.MAX_MODULE_BYTES)),
    manager: ctx.services.market.managerId,
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
      // The consumer took another manager's quote: the job is that manager's.
      const named = input instanceof StagedSubmission ? input.head.manager : input.manager;
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
        checkQueuedTasks(market, ctx.caller.id, tasksIn(input) * replicas, config.QUEUED_TASKS_PER_USER);
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
  list: consumerProcedure.query(({ ctx }) => jobSummaries(ctx.services.db, { ownerId: ctx.caller.id })),
  get: jobOwnerProcedure.query(({ ctx, input }) => jobView(ctx.services.market, input.jobId)),
  /** When its tasks were done, against its benefit curve (the job page's chart). */
  progress: jobOwnerProcedure.query(({ ctx, input }) => jobProgress(ctx.services.database.reads, input.jobId)),
  /** The market's decisions about this job, newest first. */
  decisions: jobOwnerProcedure
    .input(DecisionFilter.pick({ cursor: true, pageSize: true, outcome: true }))
    .query(({ ctx, input }) => listDecisions(ctx.services.db, { ...input, jobId: input.jobId })),
  cancel: jobOwnerProcedure.mutation(({ ctx, input }) => cancelJob(ctx.services.market, input.jobId)),
  outputs: jobOwnerProcedure
    .input(z.object({ fromIndex: z.number().int().min(0).default(0), limit: z.number().int().min(1).max(1000).default(200) }))
    .query(({ ctx, input }) => jobOutputs(ctx.services.database.reads, input.jobId, input.fromIndex, input.limit)),
  /** The job file that submits this job again ("Run again"): the module by hash, every task written out. */
  jobFile: jobOwnerProcedure.query(({ ctx, input }) => jobFileOf(ctx.services.db, input.jobId)),
  /** The job's view each time its status or task counts change; ends when the job has ended. */
  watch: jobStreamProcedure.subscription(({ ctx, input, signal }) => watchJob(ctx.services.market, input.jobId, signal)),
  /** Each task's output as it is accepted (bytes as base64), then `end`; resumes from its last event id. */
  streamOutputs: jobStreamProcedure.subscription(({ ctx, input, signal }) => jobResults(ctx.services.market, input.jobId, input.lastEventId ?? null, signal)),
});
