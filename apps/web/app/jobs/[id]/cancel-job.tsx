"use client";
import { useId, useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { creditAmount } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { Alert, Button } from "@/components/ui";
import { useMoneyMoved } from "@/components/balance";

export const CANCELLABLE = new Set(["delayed", "admitted", "running"]);

/**
 * "Cancel job", then a confirmation in the page: the consumer is charged for the tasks done, those
 * whose run failed unconfirmed included (the quote's share of them, or what their producers were
 * paid when that is more), and the rest of the escrow comes back.
 */
export function CancelJob({ jobId, status }: { jobId: string; status: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const moneyMoved = useMoneyMoved();
  const [confirming, setConfirming] = useState(false);
  const titleId = useId();
  const cancel = useMutation(
    trpc.jobs.cancel.mutationOptions({
      onSettled: async () => {
        setConfirming(false);
        await Promise.all([
          queryClient.invalidateQueries({ queryKey: trpc.jobs.get.queryKey({ jobId }) }),
          queryClient.invalidateQueries({ queryKey: trpc.jobs.list.queryKey() }),
          moneyMoved(),
        ]);
      },
    }),
  );

  if (cancel.data) {
    return (
      <div className="mt-4">
        <Alert tone="success" title="Job cancelled">
          {cancel.data.charged > 0
            ? `Charged ${creditAmount(cancel.data.charged)} credits for the tasks already done (those whose run failed count too): the quote's share of them, or what their producers were paid when that is more. The rest of the escrow is back in your balance.`
            : "Nothing was charged: none of its tasks was done yet. Whatever was held in escrow is back in your balance."}
        </Alert>
      </div>
    );
  }

  if (!CANCELLABLE.has(status)) {
    return cancel.error ? (
      <div className="mt-4">
        <Alert tone="error" title="The job was not cancelled">{describeError(cancel.error)}</Alert>
      </div>
    ) : null;
  }

  return (
    <div className="mt-4 space-y-3">
      {confirming ? (
        <div role="alertdialog" aria-labelledby={titleId} className="rounded-lg border border-rose-200 bg-rose-50 px-4 py-3 text-sm text-rose-900">
          <p id={titleId} className="font-semibold">
            Cancel this job?
          </p>
          <p className="mt-1">
            Its unfinished tasks stop at once. You are charged for the tasks already done, and for those whose run failed (how a task ended is an
            answer too), the quote&apos;s share of them (or what their producers were paid, when that is more); the rest of the escrow comes back to
            your balance. This cannot be undone.
          </p>
          <div className="mt-3 flex flex-wrap gap-2">
            <Button variant="danger" busy={cancel.isPending} onClick={() => cancel.mutate({ jobId })}>
              Yes, cancel the job
            </Button>
            <Button variant="secondary" disabled={cancel.isPending} onClick={() => setConfirming(false)}>
              Keep it running
            </Button>
          </div>
        </div>
      ) : (
        <Button
          variant="danger-outline"
          onClick={() => {
            cancel.reset();
            setConfirming(true);
          }}
        >
          Cancel job
        </Button>
      )}
      {cancel.error ? <Alert tone="error" title="The job was not cancelled">{describeError(cancel.error)}</Alert> : null}
    </div>
  );
}
