"use client";
import { useState } from "react";
import { credits, dateTime } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { StatementTable, useStatement } from "@/components/balance";
import { Alert, Card, Loading, Stat, cx } from "@/components/ui";
import { EarningsChart, SpendingChart } from "@/components/earnings-chart";
import { hasRole, useMe } from "@/components/session";

type Filter = "all" | "consumer" | "producer";
const FILTERS: [Filter, string][] = [
  ["all", "All"],
  ["consumer", "Consumer"],
  ["producer", "Producer"],
];

export function CreditsPanel() {
  const statement = useStatement();
  const me = useMe().data;
  const [filter, setFilter] = useState<Filter>("all");
  // Each role's figures and chart only for a user who has it: a buyer is not shown an empty earnings chart.
  const consumer = !me || hasRole(me, "consumer");
  const producer = !me || hasRole(me, "producer");

  if (statement.isPending) return <Loading label="Loading your statement…" />;
  if (statement.isError) return <Alert tone="error" title="Your statement could not be loaded">{describeError(statement.error)}</Alert>;
  const { consumerBalance, producerBalance, inEscrow, lines } = statement.data;
  const shown = filter === "all" ? lines : lines.filter((l) => l.account === filter);

  return (
    <div className="space-y-6">
      <dl className="grid gap-3 sm:grid-cols-3">
        <Stat label="Balance" value={credits(consumerBalance)} testId="consumer-balance" />
        {consumer ? <Stat label="Held in escrow for your jobs" value={credits(inEscrow)} testId="escrow-balance" /> : null}
        {producer ? <Stat label="Earned as a producer" value={credits(producerBalance)} testId="producer-balance" /> : null}
      </dl>
      {consumer ? (
        <Card title="Spent on your jobs">
          <SpendingChart />
        </Card>
      ) : null}
      {producer ? (
        <Card title="Earnings as a producer">
          <EarningsChart />
        </Card>
      ) : null}
      <Card
        title="Statement"
        actions={
          <div role="radiogroup" aria-label="Which account" className="inline-flex rounded-lg bg-slate-100 p-1">
            {FILTERS.map(([value, label]) => (
              <label
                key={value}
                className={cx(
                  "relative cursor-pointer rounded-md px-3 py-1 text-xs font-medium has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-indigo-600",
                  filter === value ? "bg-white text-slate-900 shadow-sm" : "text-slate-600 hover:text-slate-900",
                )}
              >
                <input type="radio" name="account-filter" value={value} checked={filter === value} onChange={() => setFilter(value)} className="absolute inset-0 cursor-pointer opacity-0" />
                {label}
              </label>
            ))}
          </div>
        }
      >
        <div
          className={shown.length > 0 ? "-mx-5 -mb-5 overflow-x-auto rounded-b-xl" : undefined}
          {...(shown.length > 0 ? { tabIndex: 0, role: "region", "aria-label": "Statement lines" } : {})}
        >
          <StatementTable lines={shown} />
        </div>
      </Card>
      <p className="text-xs text-slate-600" aria-live="off">
        Positive amounts are credited to you. Refreshed every few seconds · last at {dateTime(statement.dataUpdatedAt)}
        {lines.length >= 200 ? " · showing the latest 200 movements" : ""}
      </p>
    </div>
  );
}
