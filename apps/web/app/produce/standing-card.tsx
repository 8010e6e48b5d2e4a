"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { credits, number } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { Card, Stat } from "@/components/ui";
import type { RouterOutputs } from "@/lib/trpc";

const REFRESH_MS = 30_000;

type Step = RouterOutputs["machines"]["standing"]["steps"][number];

/** What raises standing, in words (the market sends codes and numbers: market/standing.ts). */
function stepText(s: Step) {
  switch (s.code) {
    case "confirm-email":
      return (
        <>
          <Link href="/account" className="font-medium text-indigo-700 hover:underline">
            Confirm your email address
          </Link>{" "}
          (the link was mailed to you at sign-up).
        </>
      );
    case "account-age":
      return `Your account must be ${number(s.minAgeSeconds / 3600, 0)} hours old; it is ${number(s.ageSeconds / 3600, 1)} hours old.`;
    case "verified-results":
      return `Run results that machines of other accounts with standing confirm: ${number(Math.max(0, s.net), 0)} of ${s.need} so far (a disagreement takes 5 back, a failure another owner contradicts 1, a lease left to expire 0.5).`;
    case "fewer-spot-checks":
      return `${number(s.spotCheck * 100, 0)}% of your single-copy results are run again elsewhere to check them; each check you pass lowers that, down to the floor once ${number(s.floorAt, 0)} results were verified. A check is paid from the market's margin on the task first, then from your run's piece.`;
  }
}

/**
 * The producer's standing: whether its results count towards a quorum and run without an added
 * copy, what raises it, what the market verified of its machines' work, and what it may be
 * promised in dedicated contracts.
 */
export function StandingCard() {
  const trpc = useTRPC();
  const q = useQuery({ ...trpc.machines.standing.queryOptions(), refetchInterval: REFRESH_MS });
  if (q.isError) return <Card title="Your standing">{describeError(q.error)}</Card>;
  const s = q.data;
  const status = !s ? "…" : s.forged ? "Lost: caught forging" : s.has ? (s.spotCheck > 0 ? "Yes" : "Yes, trusted by the market") : `Not yet (${number(s.score * 100, 0)}%)`;
  return (
    <Card title="Your standing">
      <dl className="grid grid-cols-2 gap-3">
        <Stat label="Standing" value={status} testId="producer-standing" />
        <Stat label="Verified results" value={s ? number(s.facts.verified, 0) : "…"} testId="producer-verified" />
        <Stat label="Address" value={s ? (s.confirmed ? "confirmed" : "not confirmed") : "…"} testId="standing-confirmed" />
        <Stat label="Contracts up to" value={s ? credits(s.contractCeiling) : "…"} testId="standing-ceiling" />
      </dl>
      <p className="mt-3 text-xs text-slate-600">
        Without standing, each of your results runs once more on a machine of an account that has it, and is accepted and paid once the two agree. A result that
        an accepted one outvotes by two accounts with standing is a forgery: the account loses its standing for good and what that job paid it; outvoted by less,
        it is a disagreement, and the task runs on more machines until one output leads by two. What the market may
        owe you in dedicated contracts grows with your verified results as your account ages
        {s && s.contractsOwed > 0 ? ` (your contracts still owe ${credits(s.contractsOwed)})` : ""}.
      </p>
      {s && s.steps.length ? (
        <ul className="mt-3 list-disc space-y-1 pl-5 text-sm text-slate-700" aria-label="What raises your standing" data-testid="standing-steps">
          {s.steps.map((step) => (
            <li key={step.code}>{stepText(step)}</li>
          ))}
        </ul>
      ) : null}
      {s ? (
        <p className="mt-3 text-xs text-slate-500">
          Recorded: {s.facts.disagreements} disagreements, {s.facts.unconfirmedFailures} failures another owner contradicted, {s.facts.expiredLeases} leases left to expire.
        </p>
      ) : null}
    </Card>
  );
}
