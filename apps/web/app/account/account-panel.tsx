"use client";
import { useEffect, useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/lib/trpc";
import { dateTime } from "@/lib/format";
import { describeError } from "@/lib/reasons";
import { hasRole, type Me } from "@/components/session";
import { Alert, Badge, Button, ButtonLink, Card, EmptyState, Field, Loading, inputClass } from "@/components/ui";
import { useBalance, useMoneyMoved } from "@/components/balance";
import { newRequestId } from "@/lib/request-id";
import { credits } from "@/lib/format";
import { ClientInstall, WorkerInstall, clientCommand, useOrigin, workerCommand } from "@/components/install-commands";

type Created = RouterOutputs["account"]["tokens"]["create"];

export function AccountPanel({ me }: { me: Me }) {
  return (
    // minmax(0, …): a long install command scrolls inside its column instead of widening the page.
    <div className="grid grid-cols-1 gap-6 lg:grid-cols-[20rem_minmax(0,1fr)]">
      <div className="space-y-6">
        <Card title="You">
          <dl className="space-y-2 text-sm">
            <div>
              <dt className="text-slate-500">Name</dt>
              <dd className="font-medium text-slate-900">
                <bdi>{me.name}</bdi>
              </dd>
            </div>
            <div>
              <dt className="text-slate-500">Email</dt>
              <dd className="font-medium text-slate-900"><bdi>{me.email}</bdi></dd>
            </div>
          </dl>
        </Card>
        <CreditsCard canSpend={hasRole(me, "consumer") || hasRole(me, "admin")} />
        <RolesCard me={me} />
      </div>
      <div>
        {hasRole(me, "producer") || hasRole(me, "consumer") ? (
          <TokensCard canProduce={hasRole(me, "producer")} canConsume={hasRole(me, "consumer")} />
        ) : (
          <Card title="API tokens"><p className="text-sm text-slate-600">Add the producer or consumer role to create API tokens.</p></Card>
        )}
      </div>
    </div>
  );
}

function CreditsCard({ canSpend }: { canSpend: boolean }) {
  const balance = useBalance();
  return (
    <Card title="Credits">
      {balance.isPending ? (
        <Loading label="Loading your balance…" />
      ) : balance.isError ? (
        <Alert tone="error">{describeError(balance.error)}</Alert>
      ) : (
        <dl className="space-y-2 text-sm">
          <div className="flex justify-between gap-3">
            <dt className="text-slate-500">Balance</dt>
            <dd className="font-semibold tabular-nums text-slate-900" data-testid="account-consumer-balance">
              {credits(balance.data.consumerBalance)}
            </dd>
          </div>
          <div className="flex justify-between gap-3">
            <dt className="text-slate-500">Earned as a producer</dt>
            <dd className="font-semibold tabular-nums text-slate-900" data-testid="account-producer-balance">
              {credits(balance.data.producerBalance)}
            </dd>
          </div>
        </dl>
      )}
      {canSpend && balance.data ? <MoveEarnings earned={balance.data.producerBalance} /> : null}
      <div className="mt-4">
        <ButtonLink href="/account/credits" variant="secondary">
          See your statement
        </ButtonLink>
      </div>
      <p className="mt-3 text-xs text-slate-500">
        Credits come with a confirmed address, from your machines&apos; earnings moved here, or from the market&apos;s admin.
      </p>
    </Card>
  );
}

/**
 * One click moves every credit the user's machines earned to their consumer balance, to pay for
 * their own jobs. The move's id is made before the click, so a double click moves nothing more.
 */
function MoveEarnings({ earned }: { earned: number }) {
  const trpc = useTRPC();
  const moneyMoved = useMoneyMoved();
  const [transferId, setTransferId] = useState(newRequestId);
  const [moved, setMoved] = useState<number | null>(null);
  const move = useMutation(trpc.ledger.transferEarnings.mutationOptions());
  async function onMove() {
    setMoved(null);
    try {
      const done = await move.mutateAsync({ transferId });
      setMoved(done.moved);
      setTransferId(newRequestId());
      await moneyMoved();
    } catch {
      // shown from move.error
    }
  }
  if (earned <= 0 && moved === null && !move.error) return null;
  return (
    <div className="mt-3 space-y-2">
      {earned > 0 ? (
        <Button variant="secondary" onClick={onMove} busy={move.isPending} data-testid="move-earnings">
          Move {credits(earned)} to my balance
        </Button>
      ) : null}
      {move.error ? <Alert tone="error">{describeError(move.error)}</Alert> : null}
      {moved !== null && !move.error ? (
        <p className="text-xs text-emerald-800" role="status" data-testid="earnings-moved">
          Moved {credits(moved)} from your earnings to your balance.
        </p>
      ) : null}
    </div>
  );
}

function RolesCard({ me }: { me: Me }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [producer, setProducer] = useState(me.roles.includes("producer"));
  const [consumer, setConsumer] = useState(me.roles.includes("consumer"));
  const choose = useMutation(
    trpc.account.chooseRoles.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.account.me.queryKey() }),
    }),
  );
  useEffect(() => {
    setProducer(me.roles.includes("producer"));
    setConsumer(me.roles.includes("consumer"));
  }, [me.roles]);

  const changed = producer !== me.roles.includes("producer") || consumer !== me.roles.includes("consumer");

  function save(e: FormEvent) {
    e.preventDefault();
    const roles = [...(producer ? (["producer"] as const) : []), ...(consumer ? (["consumer"] as const) : [])];
    choose.mutate({ roles });
  }

  return (
    <Card title="Roles">
      <div className="mb-3 flex flex-wrap gap-2" aria-label="Your roles">
        {me.roles.map((r) => (
          <Badge key={r} value={r} />
        ))}
      </div>
      <form onSubmit={save} className="space-y-3">
        <label className="flex items-start gap-3 text-sm">
          <input type="checkbox" checked={producer} onChange={(e) => setProducer(e.target.checked)} className="mt-0.5 accent-indigo-600" />
          <span>
            <span className="block font-medium text-slate-900">Producer</span>
            <span className="text-xs text-slate-500">Sell cycles from a browser tab or a Node worker.</span>
          </span>
        </label>
        <label className="flex items-start gap-3 text-sm">
          <input type="checkbox" checked={consumer} onChange={(e) => setConsumer(e.target.checked)} className="mt-0.5 accent-indigo-600" />
          <span>
            <span className="block font-medium text-slate-900">Consumer</span>
            <span className="text-xs text-slate-500">Submit jobs and pay by your benefit curve.</span>
          </span>
        </label>
        {me.roles.includes("admin") ? <p className="text-xs text-slate-500">You are also a market admin; that role is granted, not chosen.</p> : null}
        {choose.error ? <Alert tone="error">{describeError(choose.error)}</Alert> : null}
        {choose.isSuccess && !changed ? <Alert tone="success">Roles saved.</Alert> : null}
        <Button type="submit" variant="secondary" disabled={!changed || (!producer && !consumer)} busy={choose.isPending}>
          Save roles
        </Button>
      </form>
    </Card>
  );
}

const SCOPE_WORDS = { produce: "run Node workers (produce)", consume: "submit and read jobs from the SDK and CLI (consume)" } as const;

function TokensCard({ canProduce, canConsume }: { canProduce: boolean; canConsume: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const tokens = useQuery(trpc.account.tokens.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.account.tokens.list.queryKey() });
  const create = useMutation(trpc.account.tokens.create.mutationOptions({ onSuccess: refresh }));
  const revoke = useMutation(trpc.account.tokens.revoke.mutationOptions({ onSuccess: refresh }));
  const [name, setName] = useState("");
  const [scope, setScope] = useState<"produce" | "consume">(canProduce ? "produce" : "consume");
  const [created, setCreated] = useState<Created | null>(null);

  async function onCreate(e: FormEvent) {
    e.preventDefault();
    try {
      const token = await create.mutateAsync({ name: name.trim(), scopes: [scope] });
      setCreated(token);
      setName("");
    } catch {
      // shown from create.error
    }
  }

  return (
    <Card title="API tokens">
      <p className="text-sm text-slate-600">
        A Node worker sells a server's cycles with a <em>produce</em> token; the <code>cyclemarket</code> CLI and SDK submit jobs with a <em>consume</em> token. A token does only
        what its scope says and cannot make other tokens. Create one per machine or script so you can revoke it alone.
      </p>
      <form onSubmit={onCreate} className="mt-4 flex flex-wrap items-end gap-3">
        <Field label="Token name" className="min-w-56 flex-1">
          {(p) => <input {...p} value={name} placeholder="e.g. build server" required maxLength={80} onChange={(e) => setName(e.target.value)} className={inputClass} />}
        </Field>
        <Field label="It may" className="min-w-56">
          {(p) => (
            <select {...p} value={scope} onChange={(e) => setScope(e.target.value as "produce" | "consume")} className={inputClass}>
              {canProduce ? <option value="produce">{SCOPE_WORDS.produce}</option> : null}
              {canConsume ? <option value="consume">{SCOPE_WORDS.consume}</option> : null}
            </select>
          )}
        </Field>
        <Button type="submit" busy={create.isPending}>
          Create token
        </Button>
      </form>
      {create.error ? (
        <div className="mt-3">
          <Alert tone="error">{describeError(create.error)}</Alert>
        </div>
      ) : null}
      {created ? <NewToken created={created} onDismiss={() => setCreated(null)} /> : null}

      <div className="mt-6 space-y-4 border-t border-slate-100 pt-4">
        {canProduce ? <WorkerInstall tokensAbove /> : null}
        {canConsume ? <ClientInstall /> : null}
      </div>

      <h3 className="mt-6 text-sm font-semibold text-slate-900">Your tokens</h3>
      <div className="mt-2">
        {tokens.isPending ? (
          <Loading label="Loading tokens…" />
        ) : tokens.isError ? (
          <Alert tone="error">{describeError(tokens.error)}</Alert>
        ) : tokens.data.length === 0 ? (
          <EmptyState title="No tokens yet">Create one to start a Node worker, or to submit jobs with the SDK or the CLI.</EmptyState>
        ) : (
          <table className="min-w-full text-sm" aria-label="API tokens">
            <thead className="text-left text-xs uppercase tracking-wide text-slate-500">
              <tr>
                <th scope="col" className="py-2">Name</th>
                <th scope="col" className="py-2">Token</th>
                <th scope="col" className="py-2">Scope</th>
                <th scope="col" className="py-2">Created</th>
                <th scope="col" className="py-2">Last used</th>
                <th scope="col" className="py-2"><span className="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {tokens.data.map((t) => (
                <tr key={t.id}>
                  <td className="py-2 font-medium text-slate-900"><bdi>{t.name}</bdi></td>
                  <td className="py-2 font-mono text-xs text-slate-600">{t.prefix}…</td>
                  <td className="py-2 text-slate-600">{t.scopes.join(", ")}</td>
                  <td className="py-2 text-slate-600">{dateTime(t.createdAt)}</td>
                  <td className="py-2 text-slate-600">{t.lastUsedAt ? dateTime(t.lastUsedAt) : "never"}</td>
                  <td className="py-2 text-right">
                    <Button
                      variant="ghost"
                      aria-label={`Revoke ${t.name}`}
                      busy={revoke.isPending && revoke.variables?.id === t.id}
                      onClick={() => {
                        if (window.confirm(`Revoke the token "${t.name}"? Workers using it stop at their next request.`)) revoke.mutate({ id: t.id });
                      }}
                    >
                      Revoke
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {revoke.error ? (
          <div className="mt-3">
            <Alert tone="error">{describeError(revoke.error)}</Alert>
          </div>
        ) : null}
      </div>
    </Card>
  );
}

/** The token is shown once: the market keeps only its hash. */
function NewToken({ created, onDismiss }: { created: Created; onDismiss: () => void }) {
  const token = tokenOf(created);
  const origin = useOrigin();
  const [copied, setCopied] = useState(false);
  const produce = created.scopes.includes("produce");
  const command = produce ? workerCommand(origin, token) : `CYCLEMARKET_URL=${origin} CYCLEMARKET_TOKEN=${token} npx cyclemarket quote job.json`;
  return (
    <div className="mt-4 rounded-lg border border-emerald-200 bg-emerald-50 p-4" role="status">
      <p className="text-sm font-semibold text-emerald-900">Token created. Copy it now: it will not be shown again.</p>
      <p className="mt-2 text-xs text-emerald-800">
        {produce ? "Start a worker on any machine with Node 20:" : <>In a project where <code>{clientCommand(origin)}</code> was run:</>}
      </p>
      <pre className="mt-1 overflow-x-auto rounded bg-slate-900 p-3 font-mono text-xs text-slate-100" data-testid="worker-command">
        {command}
      </pre>
      <div className="mt-2 flex gap-2">
        <Button
          variant="secondary"
          onClick={async () => {
            await navigator.clipboard?.writeText(command);
            setCopied(true);
          }}
        >
          {copied ? "Copied" : "Copy command"}
        </Button>
        <Button variant="ghost" onClick={onDismiss}>
          Done
        </Button>
      </div>
      <p className="sr-only" data-testid="api-token">
        {token}
      </p>
    </div>
  );
}

function tokenOf(created: Created): string {
  return created.token;
}
