"use client";
// An admin grants credits to a consumer: from the market's account, with the admin's name and the
// reason on the ledger entry, which the consumer's statement shows. Each grant carries an id made
// when the form is filled in, so a second click or a retried request grants nothing more.
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/lib/trpc";
import { credits, dateTime } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { newRequestId } from "@/lib/request-id";
import { Alert, Button, Card, Field, inputClass } from "@/components/ui";

type Granted = RouterOutputs["admin"]["grantCredits"];

export function GrantCredits() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const grants = useQuery(trpc.admin.grants.queryOptions());
  const grant = useMutation(
    trpc.admin.grantCredits.mutationOptions({
      onSuccess: () => Promise.all([queryClient.invalidateQueries({ queryKey: trpc.admin.grants.queryKey() }), queryClient.invalidateQueries({ queryKey: trpc.admin.overview.queryKey() })]),
    }),
  );
  const [email, setEmail] = useState("");
  const [amount, setAmount] = useState("");
  const [reason, setReason] = useState("");
  const [grantId, setGrantId] = useState(() => newRequestId());
  const [done, setDone] = useState<Granted | null>(null);

  async function onGrant(e: FormEvent) {
    e.preventDefault();
    setDone(null);
    try {
      setDone(await grant.mutateAsync({ grantId, email, credits: Number(amount), reason }));
      // The next grant is a new one.
      setGrantId(newRequestId());
      setAmount("");
      setReason("");
    } catch {
      // shown from grant.error
    }
  }

  return (
    <Card title="Grant credits">
      <p className="text-sm text-slate-600">
        Credits from the market&apos;s account to a consumer&apos;s: a refund, a prize, or a top-up paid outside the market. The consumer&apos;s statement shows
        your name and the reason; the market&apos;s account may go down to minus its reserve (a setting below).
      </p>
      <form onSubmit={onGrant} className="mt-4 grid gap-3 sm:grid-cols-[1fr_9rem] lg:grid-cols-[16rem_9rem_1fr_auto] lg:items-end" aria-label="Grant credits">
        <Field label="Consumer's email">
          {(p) => <input {...p} type="email" required maxLength={254} value={email} onChange={(e) => setEmail(e.target.value)} className={inputClass} />}
        </Field>
        <Field label="Credits">
          {(p) => <input {...p} type="number" required min={0.000001} max={1_000_000} step="any" value={amount} onChange={(e) => setAmount(e.target.value)} className={inputClass} />}
        </Field>
        <Field label="Reason">
          {(p) => <input {...p} required minLength={3} maxLength={200} value={reason} placeholder="e.g. refund for a failed job" onChange={(e) => setReason(e.target.value)} className={inputClass} />}
        </Field>
        <Button type="submit" busy={grant.isPending}>
          Grant
        </Button>
      </form>
      {grant.error ? (
        <div className="mt-3">
          <Alert tone="error" title="Nothing was granted">
            {describeError(grant.error)}
          </Alert>
        </div>
      ) : null}
      {done ? (
        <div className="mt-3" data-testid="grant-done">
          <Alert tone="success">
            {credits(done.granted)} granted to <bdi>{done.to}</bdi>
            {done.already ? " (already, by this same grant: nothing more was given)" : ""}.
          </Alert>
        </div>
      ) : null}
      {grants.data && grants.data.length > 0 ? (
        <div className="-mx-5 -mb-5 mt-4 overflow-x-auto">
          <table className="min-w-full text-sm" aria-label="Latest grants">
            <thead className="bg-slate-50 text-left text-xs uppercase tracking-wide text-slate-600">
              <tr>
                <th scope="col" className="px-5 py-2">When</th>
                <th scope="col" className="px-5 py-2">To</th>
                <th scope="col" className="px-5 py-2 text-right">Credits</th>
                <th scope="col" className="px-5 py-2">By</th>
                <th scope="col" className="px-5 py-2">Reason</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {grants.data.map((g, i) => (
                <tr key={i}>
                  <td className="whitespace-nowrap px-5 py-2 text-slate-600">{dateTime(g.at)}</td>
                  <td className="px-5 py-2"><bdi>{g.to}</bdi></td>
                  <td className="px-5 py-2 text-right tabular-nums">{credits(g.credits)}</td>
                  <td className="px-5 py-2"><bdi>{g.by}</bdi></td>
                  <td className="px-5 py-2 text-slate-600"><bdi>{g.reason}</bdi></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </Card>
  );
}
