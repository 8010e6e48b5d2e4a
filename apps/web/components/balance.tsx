"use client";
import Link from "next/link";
import { useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { credits, dateTime } from "@/lib/format";
import { describeLine, signedCredits, type StatementLine } from "@/lib/statement";
import { Badge, Button, EmptyState, cx } from "./ui";
import { hasRole, useMe } from "./session";
import { shortId } from "@cyclemarket/client/job-file";

const REFRESH_MS = 4000;
const PAGE = 50;

/** The signed-in user's ledger statement with its lines, for /account/credits, refreshed every few seconds. */
export function useStatement(enabled = true) {
  const trpc = useTRPC();
  return useQuery({ ...trpc.ledger.statement.queryOptions(), enabled, refetchInterval: REFRESH_MS, staleTime: 2000 });
}

/**
 * The signed-in user's balances without the statement's lines, shared by the header, /account,
 * /jobs/new and /produce (one query, refreshed every few seconds while any of them is on screen).
 */
export function useBalance(enabled = true) {
  const trpc = useTRPC();
  return useQuery({ ...trpc.ledger.balance.queryOptions(), enabled, refetchInterval: REFRESH_MS, staleTime: 2000 });
}

/** What moved the user's money: their balances and statement are read again at once. */
export function useMoneyMoved() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.ledger.balance.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.ledger.statement.queryKey() }),
    ]);
}

/** The consumer's balance (a producer's earnings when they only sell) beside the user's name. */
export function HeaderBalance() {
  const me = useMe();
  const balance = useBalance(Boolean(me.data));
  if (!me.data || !balance.data) return null;
  const producerOnly = !hasRole(me.data, "consumer") && hasRole(me.data, "producer");
  const value = producerOnly ? balance.data.producerBalance : balance.data.consumerBalance;
  return (
    <Link
      href="/account/credits"
      className="inline-flex items-center gap-1.5 rounded-full bg-slate-100 px-3 py-1 text-xs font-medium text-slate-700 hover:bg-indigo-50 hover:text-indigo-700"
      title={producerOnly ? "What you have earned; see your statement" : "Your balance; see your statement"}
    >
      <span className="sr-only text-slate-600 sm:not-sr-only">{producerOnly ? "Earned" : "Balance"}</span>
      <span className="tabular-nums text-slate-900" data-testid="balance">
        {credits(value)}
      </span>
    </Link>
  );
}

/** Every movement on the user's accounts, newest first; lines of the user's own jobs name and link them. */
export function StatementTable({ lines }: { lines: StatementLine[] }) {
  const [limit, setLimit] = useState(PAGE);
  if (lines.length === 0) {
    return (
      <EmptyState title="No movements yet">
        <p>Payments for tasks you run appear here as the market accepts them; buying computation brings your starting credits.</p>
      </EmptyState>
    );
  }
  return (
    <>
      <table className="min-w-full text-sm" aria-label="Statement">
        <thead className="border-b border-slate-200 bg-slate-50 text-left text-xs font-medium uppercase tracking-wide text-slate-500">
          <tr>
            <th scope="col" className="px-4 py-3">Date</th>
            <th scope="col" className="px-4 py-3">What</th>
            <th scope="col" className="px-4 py-3">Account</th>
            <th scope="col" className="px-4 py-3 text-right">Amount</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {lines.slice(0, limit).map((line, i) => {
            // Only the job's owner may open its page; a producer paid for its tasks sees its short id (and its name, when the owner allows).
            const ownJob = line.ownJob ? line.jobId : null;
            const words = describeLine(line);
            return (
              <tr key={`${line.at}-${line.kind}-${line.account}-${i}`} className="align-top hover:bg-slate-50">
                <td className="whitespace-nowrap px-4 py-3 text-slate-600">{dateTime(line.at)}</td>
                <td className="px-4 py-3">
                  <span className="block font-medium text-slate-900">
                    {ownJob ? (
                      <Link href={`/jobs/${ownJob}`} className="text-indigo-600 hover:underline">
                        {words.what}
                      </Link>
                    ) : (
                      words.what
                    )}
                  </span>
                  {words.detail || line.jobId ? (
                    <span className="block text-xs text-slate-600">
                      {line.jobId ? <span className="mr-1 font-mono">{shortId(line.jobId)}</span> : null}
                      {words.detail}
                    </span>
                  ) : null}
                </td>
                <td className="px-4 py-3">
                  <Badge value={line.account} />
                </td>
                <td
                  className={cx(
                    "whitespace-nowrap px-4 py-3 text-right font-medium tabular-nums",
                    line.amount > 0 ? "text-emerald-700" : line.amount < 0 ? "text-rose-700" : "text-slate-500",
                  )}
                >
                  {signedCredits(line.amount)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {lines.length > limit ? (
        <div className="border-t border-slate-100 px-4 py-3 text-center">
          <Button variant="ghost" onClick={() => setLimit((n) => n + PAGE)}>
            Show {Math.min(PAGE, lines.length - limit)} more of {lines.length - limit} older movements
          </Button>
        </div>
      ) : null}
    </>
  );
}
