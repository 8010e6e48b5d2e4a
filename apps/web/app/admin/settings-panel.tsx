"use client";
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC, type RouterInputs, type RouterOutputs } from "@/lib/trpc";
import { dateTime, number, seconds } from "@/lib/format";
import { describeError, errorCode } from "@/lib/reasons";
import { Alert, Button, Card, EmptyState, Field, Loading, inputClass } from "@/components/ui";

type Settings = RouterOutputs["admin"]["settings"]["get"];
type Current = Settings["current"];
type Key = keyof Current;
type Patch = RouterInputs["admin"]["settings"]["set"];
type Draft = Record<Key, string>;

const KEYS: Key[] = ["horizonSeconds", "priceConstant", "leaseTimeoutMs", "policy", "pricing", "feeFraction", "startingCredits", "marketReserve"];

const LABELS: Record<Key, string> = {
  horizonSeconds: "Planning horizon (seconds)",
  priceConstant: "Price constant",
  leaseTimeoutMs: "Lease timeout (ms)",
  policy: "Policy",
  pricing: "Pricing",
  feeFraction: "Market fee (fraction of the marginal cost)",
  startingCredits: "Starting credits per verified consumer",
  marketReserve: "Market reserve (credits)",
};

/** The same setting in the change log and the current values. */
const SHORT: Record<Key, string> = {
  horizonSeconds: "Planning horizon",
  priceConstant: "Price constant",
  leaseTimeoutMs: "Lease timeout",
  policy: "Policy",
  pricing: "Pricing",
  feeFraction: "Market fee",
  startingCredits: "Starting credits",
  marketReserve: "Market reserve",
};

const POLICY_WORDS: Record<string, string> = {
  miserly: "Cost-benefit admission, cheapest placement, rebalancing (the default).",
  "e-pvm": "Admits every job; places each task where the marginal cost is lowest.",
  "e-mosix": "Admits every job; cheapest placement, and queued work moves back as machines free up.",
  pvm: "Admits every job; round-robin placement.",
  mosix: "Admits every job; least-loaded placement with load-balancing migration.",
  random: "Admits every job; random placement.",
  fcfs: "Admits every job, first come first served, earliest finish.",
};

const isKey = (value: unknown): value is Key => typeof value === "string" && (KEYS as string[]).includes(value);

/** A setting's value as a person reads it. */
function show(key: string, value: unknown): string {
  if (typeof value !== "number") return value == null ? "—" : String(value);
  if (key === "horizonSeconds") return `${number(value, 0)} s (${seconds(value)})`;
  if (key === "leaseTimeoutMs") return `${number(value, 0)} ms (${seconds(value / 1000)})`;
  if (key === "priceConstant") return `${number(value, 6)} credit${value === 1 ? "" : "s"} per cost unit`;
  if (key === "startingCredits" || key === "marketReserve") return `${number(value, 2)} credits`;
  if (key === "feeFraction") return `${number(value * 100, 2)}%`;
  return number(value, 6);
}

function toDraft(c: Current): Draft {
  return {
    horizonSeconds: String(c.horizonSeconds),
    priceConstant: String(c.priceConstant),
    leaseTimeoutMs: String(c.leaseTimeoutMs),
    policy: c.policy,
    pricing: c.pricing,
    feeFraction: String(c.feeFraction),
    startingCredits: String(c.startingCredits),
    marketReserve: String(c.marketReserve),
  };
}

/** Only what the admin changed, numbers as typed: the API says what is out of range. */
function patchOf(draft: Draft, current: Current): Patch {
  const patch: Record<string, string | number> = {};
  const before = toDraft(current);
  for (const key of KEYS) {
    if (draft[key].trim() === before[key]) continue;
    patch[key] = key === "policy" || key === "pricing" ? draft[key] : Number(draft[key]);
  }
  return patch as Patch;
}

/** The API's zod issues under the fields they are about; the rest as one message. */
function fieldErrors(error: unknown): { byField: Partial<Record<Key, string>>; other: string | null } {
  const issues = (error as { data?: { zodIssues?: { path?: string[]; message?: string }[] | null } } | null)?.data?.zodIssues;
  if (!Array.isArray(issues) || issues.length === 0) return { byField: {}, other: error ? describeError(error) : null };
  const byField: Partial<Record<Key, string>> = {};
  const other: string[] = [];
  for (const issue of issues) {
    const key = issue.path?.[0];
    const message = issue.message ?? "is not valid";
    if (isKey(key)) byField[key] = byField[key] ? `${byField[key]} ${message}` : message;
    else other.push(message);
  }
  const named = Object.entries(byField).map(([k, m]) => `${LABELS[k as Key]}: ${m}`);
  return { byField, other: [...named, ...other].join(" ") || null };
}

export function SettingsPanel() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settings = useQuery(trpc.admin.settings.get.queryOptions());
  const save = useMutation(trpc.admin.settings.set.mutationOptions());
  const [draft, setDraft] = useState<Draft | null>(null);
  const [saved, setSaved] = useState(false);
  const [local, setLocal] = useState<Partial<Record<Key, string>>>({});

  if (settings.isPending) return <Loading label="Loading the settings…" />;
  if (settings.isError) return <Alert tone="error" title="The settings could not be loaded">{describeError(settings.error)}</Alert>;
  const { current, policies, changes } = settings.data;
  const values = draft ?? toDraft(current);
  const api = fieldErrors(save.error);
  const errors = { ...api, byField: { ...api.byField, ...local } };
  const set = (key: Key, value: string) => {
    setSaved(false);
    setDraft({ ...values, [key]: value });
  };

  async function onSave(e: FormEvent) {
    e.preventDefault();
    setSaved(false);
    const notNumbers = Object.fromEntries(
      KEYS.filter((k) => k !== "policy" && k !== "pricing" && (values[k].trim() === "" || !Number.isFinite(Number(values[k])))).map((k) => [k, "Enter a number."]),
    );
    setLocal(notNumbers);
    if (Object.keys(notNumbers).length > 0) return;
    try {
      await save.mutateAsync(patchOf(values, current));
      await queryClient.invalidateQueries({ queryKey: trpc.admin.settings.get.queryKey() });
      setDraft(null);
      setSaved(true);
    } catch {
      // shown from save.error
    }
  }

  return (
    <Card title="Settings">
      <div className="grid gap-8 lg:grid-cols-[18rem_1fr]">
        <div>
          <h3 className="text-sm font-semibold text-slate-900">In force now</h3>
          <dl className="mt-2 space-y-3 text-sm" aria-label="Current settings">
            {KEYS.map((key) => (
              <div key={key}>
                <dt className="text-slate-500">{SHORT[key]}</dt>
                <dd className="font-medium text-slate-900" data-testid={`setting-${key}`}>
                  {show(key, current[key])}
                </dd>
              </div>
            ))}
          </dl>
        </div>

        <form onSubmit={onSave} className="space-y-4" aria-label="Change settings" noValidate>
          <div className="grid gap-4 sm:grid-cols-2">
            <Field label={LABELS.horizonSeconds} hint="H: compute use is the committed backlog over H. 10 s to 30 days." error={errors.byField.horizonSeconds}>
              {(p) => <input {...p} type="number" step="any" value={values.horizonSeconds} onChange={(e) => set("horizonSeconds", e.target.value)} className={inputClass} />}
            </Field>
            <Field label={LABELS.priceConstant} hint="P: credits per unit of cost. Above 0." error={errors.byField.priceConstant}>
              {(p) => <input {...p} type="number" step="any" value={values.priceConstant} onChange={(e) => set("priceConstant", e.target.value)} className={inputClass} />}
            </Field>
            <Field label={LABELS.leaseTimeoutMs} hint="A machine silent this long has departed. 1 s to 1 h." error={errors.byField.leaseTimeoutMs}>
              {(p) => <input {...p} type="number" step={1} value={values.leaseTimeoutMs} onChange={(e) => set("leaseTimeoutMs", e.target.value)} className={inputClass} />}
            </Field>
            <Field label={LABELS.policy} hint={POLICY_WORDS[values.policy]} error={errors.byField.policy}>
              {(p) => (
                <select {...p} value={values.policy} onChange={(e) => set("policy", e.target.value)} className={inputClass}>
                  {policies.map((name) => (
                    <option key={name} value={name}>
                      {name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field
              label={LABELS.pricing}
              hint={values.pricing === "posted" ? "Jobs pay the quoted price: marginal cost plus the fee, never more than their benefit." : "Jobs pay their benefit at completion (the paper's pay-as-bid)."}
              error={errors.byField.pricing}
            >
              {(p) => (
                <select {...p} value={values.pricing} onChange={(e) => set("pricing", e.target.value)} className={inputClass}>
                  <option value="posted">posted price</option>
                  <option value="bid">pay as bid</option>
                </select>
              )}
            </Field>
            <Field label={LABELS.feeFraction} hint="Added to the marginal cost under posted pricing; 0.1 is 10%. 0 to 1." error={errors.byField.feeFraction}>
              {(p) => <input {...p} type="number" step="any" value={values.feeFraction} onChange={(e) => set("feeFraction", e.target.value)} className={inputClass} />}
            </Field>
            <Field label={LABELS.startingCredits} hint="Granted once to each consumer who verifies their email, while the reserve covers it. 0 to 1,000,000." error={errors.byField.startingCredits}>
              {(p) => <input {...p} type="number" step="any" value={values.startingCredits} onChange={(e) => set("startingCredits", e.target.value)} className={inputClass} />}
            </Field>
            <Field label={LABELS.marketReserve} hint="How far below zero the market may go for grants, dedicated contracts and lateness penalties." error={errors.byField.marketReserve}>
              {(p) => <input {...p} type="number" step="any" value={values.marketReserve} onChange={(e) => set("marketReserve", e.target.value)} className={inputClass} />}
            </Field>
          </div>
          {save.error ? (
            <Alert tone="error" title={errorCode(save.error) === "BAD_REQUEST" ? "The settings were not saved" : "The market refused the change"}>
              {errors.other ?? describeError(save.error)}
            </Alert>
          ) : null}
          {saved && !save.error ? <Alert tone="success">Settings saved; the market uses them from now on.</Alert> : null}
          <div className="flex flex-wrap gap-2">
            <Button type="submit" busy={save.isPending}>
              Save settings
            </Button>
            {draft ? (
              <Button
                variant="ghost"
                onClick={() => {
                  setDraft(null);
                  setLocal({});
                  save.reset();
                }}
              >
                Undo changes
              </Button>
            ) : null}
          </div>
        </form>
      </div>

      <h3 className="mt-8 text-sm font-semibold text-slate-900">Changes</h3>
      <div className="mt-2 overflow-x-auto">
        {changes.length === 0 ? (
          <EmptyState title="No changes yet">The market runs on its defaults until an admin changes a setting.</EmptyState>
        ) : (
          <table className="min-w-full text-sm" aria-label="Setting changes">
            <thead className="text-left text-xs uppercase tracking-wide text-slate-500">
              <tr>
                <th scope="col" className="py-2 pr-4">When</th>
                <th scope="col" className="py-2 pr-4">Who</th>
                <th scope="col" className="py-2 pr-4">Setting</th>
                <th scope="col" className="py-2">Change</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {changes.map((c, i) => (
                <tr key={`${c.at}-${c.key}-${i}`}>
                  <td className="whitespace-nowrap py-2 pr-4 text-slate-600">{dateTime(c.at)}</td>
                  <td className="py-2 pr-4 text-slate-900">{c.by}</td>
                  <td className="py-2 pr-4 font-medium text-slate-900">{isKey(c.key) ? SHORT[c.key] : c.key}</td>
                  <td className="py-2 text-slate-700">
                    <span className="text-slate-500">{show(c.key, c.from)}</span> <span aria-hidden="true">→</span>
                    <span className="sr-only">to</span> <span className="font-medium text-slate-900">{show(c.key, c.to)}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </Card>
  );
}
