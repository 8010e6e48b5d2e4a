"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { credits, number } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { Card, Stat } from "@/components/ui";

const REFRESH_MS = 60_000;

/**
 * What the market verified of this producer, and what that lets it do: its copies count in a
 * replica quorum once its address is confirmed, and the market may owe it more in dedicated
 * contracts as its results are accepted. Says what raises it.
 */
export function StandingCard() {
  const trpc = useTRPC();
  const standing = useQuery({ ...trpc.machines.standing.queryOptions(), refetchInterval: REFRESH_MS });
  if (standing.isError) return <Card title="Your standing">{describeError(standing.error)}</Card>;
  const s = standing.data;
  return (
    <Card title="Your standing">
      <dl className="grid grid-cols-2 gap-3">
        <Stat label="Address" value={s ? (s.confirmed ? "confirmed" : "not confirmed") : "…"} testId="standing-confirmed" />
        <Stat label="Results accepted" value={s ? number(s.acceptedResults, 0) : "…"} testId="standing-results" />
        <Stat label="Counts in a quorum" value={s ? (s.countsInQuorum ? "yes" : "no") : "…"} testId="standing-quorum" />
        <Stat label="Contracts up to" value={s ? credits(s.contractCeiling) : "…"} testId="standing-ceiling" />
      </dl>
      <p className="mt-3 text-xs text-slate-600" data-testid="standing-explained">
        {s && !s.confirmed ? (
          <>
            <Link href="/account" className="font-medium text-indigo-700 hover:underline">
              Confirm your address
            </Link>{" "}
            so that your machines&apos; results count when a job asks for copies checked against each other, and the market may owe you more in dedicated contracts.{" "}
          </>
        ) : null}
        Each result of yours the market accepts raises what it may owe you in dedicated contracts
        {s && s.contractsOwed > 0 ? ` (your contracts still owe ${credits(s.contractsOwed)})` : ""}.
      </p>
    </Card>
  );
}
