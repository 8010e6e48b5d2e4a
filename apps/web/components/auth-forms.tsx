"use client";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useState, type FormEvent } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { authClient } from "@/lib/auth-client";
import { useTRPC } from "@/lib/trpc";
import { describeError } from "@/lib/reasons";
import { Alert, Button, Card, Field, inputClass } from "./ui";

type Intent = "producer" | "consumer" | "both";
const INTENTS: { value: Intent; label: string; hint: string }[] = [
  { value: "producer", label: "I want to sell cycles", hint: "Run tasks in this browser or on a server and get paid." },
  { value: "consumer", label: "I want to buy computation", hint: "Submit jobs and pay by your benefit curve." },
  { value: "both", label: "Both", hint: "Sell and buy." },
];

/** Only same-site paths, so a link cannot send someone elsewhere after signing in. */
function safeNext(raw: string | null): string | null {
  return raw && raw.startsWith("/") && !raw.startsWith("//") ? raw : null;
}

function authMessage(error: { message?: string; code?: string; status?: number } | null | undefined): string {
  if (!error) return "Something went wrong.";
  if (error.status === 0 || /fetch/i.test(error.message ?? "")) return "The market cannot be reached right now. Is the Market Manager running?";
  return error.message || error.code || `The request failed (${error.status ?? "unknown"}).`;
}

export function SignUpForm() {
  const router = useRouter();
  const next = safeNext(useSearchParams().get("next"));
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const chooseRoles = useMutation(trpc.account.chooseRoles.mutationOptions());
  const [intent, setIntent] = useState<Intent>("both");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setError(null);
    setBusy(true);
    try {
      const { error: signUpError } = await authClient.signUp.email({
        name: String(form.get("name") ?? "").trim(),
        email: String(form.get("email") ?? "").trim(),
        password: String(form.get("password") ?? ""),
        // The mailed link lands on a page that says the address is confirmed and what it brought.
        callbackURL: "/account/confirmed",
      });
      if (signUpError) {
        setError(authMessage(signUpError));
        return;
      }
      const roles = intent === "both" ? (["producer", "consumer"] as const) : ([intent] as const);
      await chooseRoles.mutateAsync({ roles: [...roles] });
      await queryClient.invalidateQueries();
      router.push(next ?? (intent === "producer" ? "/produce" : "/jobs/new"));
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card className="mx-auto max-w-md">
      <h1 className="text-xl font-semibold text-slate-900">Create your account</h1>
      <p className="mt-1 text-sm text-slate-600">Join the market as a producer, a consumer, or both.</p>
      <form onSubmit={submit} className="mt-6 space-y-4" noValidate={false}>
        <Field label="Name">{(p) => <input {...p} name="name" required autoComplete="name" className={inputClass} />}</Field>
        <Field label="Email">{(p) => <input {...p} name="email" type="email" required autoComplete="email" className={inputClass} />}</Field>
        <Field label="Password" hint="At least 10 characters, not a common one, not your address.">
          {(p) => <input {...p} name="password" type="password" required minLength={10} maxLength={128} autoComplete="new-password" className={inputClass} />}
        </Field>
        <fieldset>
          <legend className="text-sm font-medium text-slate-800">What do you want to do?</legend>
          <div className="mt-2 space-y-2">
            {INTENTS.map((o) => (
              <label key={o.value} className="flex cursor-pointer items-start gap-3 rounded-lg border border-slate-200 p-3 has-[:checked]:border-indigo-500 has-[:checked]:bg-indigo-50">
                <input type="radio" name="intent" value={o.value} checked={intent === o.value} onChange={() => setIntent(o.value)} className="mt-0.5 accent-indigo-600" />
                <span>
                  <span className="block text-sm font-medium text-slate-900">{o.label}</span>
                  <span className="block text-xs text-slate-500">{o.hint}</span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        {error ? <Alert tone="error">{error}</Alert> : null}
        <Button type="submit" busy={busy} className="w-full">
          Sign up
        </Button>
      </form>
      <p className="mt-4 text-center text-sm text-slate-600">
        Already have an account?{" "}
        <Link href={next ? `/signin?next=${encodeURIComponent(next)}` : "/signin"} className="font-medium text-indigo-600 hover:underline">
          Sign in
        </Link>
      </p>
    </Card>
  );
}

export function SignInForm() {
  const router = useRouter();
  const next = safeNext(useSearchParams().get("next"));
  const queryClient = useQueryClient();
  const trpc = useTRPC();
  // Where each signs in to: the admin to the market's page, a producer alone to their machines.
  const landing = async () => {
    const me = await queryClient.fetchQuery({ ...trpc.account.me.queryOptions(), staleTime: 5000 }).catch(() => null);
    if (me?.roles.includes("admin")) return "/admin";
    return me && !me.roles.includes("consumer") && me.roles.includes("producer") ? "/produce" : "/jobs";
  };
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setError(null);
    setBusy(true);
    try {
      const { error: signInError } = await authClient.signIn.email({
        email: String(form.get("email") ?? "").trim(),
        password: String(form.get("password") ?? ""),
      });
      if (signInError) {
        setError(signInError.status === 401 ? "That email and password do not match an account." : authMessage(signInError));
        return;
      }
      await queryClient.invalidateQueries();
      router.push(next ?? (await landing()));
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card className="mx-auto max-w-md">
      <h1 className="text-xl font-semibold text-slate-900">Sign in</h1>
      <p className="mt-1 text-sm text-slate-600">Welcome back to the market.</p>
      <form onSubmit={submit} className="mt-6 space-y-4">
        <Field label="Email">{(p) => <input {...p} name="email" type="email" required autoComplete="email" className={inputClass} />}</Field>
        <Field label="Password">{(p) => <input {...p} name="password" type="password" required autoComplete="current-password" className={inputClass} />}</Field>
        {error ? <Alert tone="error">{error}</Alert> : null}
        <Button type="submit" busy={busy} className="w-full">
          Sign in
        </Button>
      </form>
      <p className="mt-4 text-center text-sm text-slate-600">
        New here?{" "}
        <Link href={next ? `/signup?next=${encodeURIComponent(next)}` : "/signup"} className="font-medium text-indigo-600 hover:underline">
          Create an account
        </Link>
      </p>
    </Card>
  );
}
