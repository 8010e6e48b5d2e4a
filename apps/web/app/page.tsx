import Link from "next/link";
import { ButtonLink } from "@/components/ui";

const STEPS = [
  {
    title: "Producers sell idle cycles",
    body: "Open the Produce page in any browser, or start a Node worker with an API token. Your machine is benchmarked, joins the market, and runs tasks in a sandbox with no network and no access to your files.",
  },
  {
    title: "Consumers buy computation",
    body: "Upload a WASI WebAssembly program with many tasks, or pick a shipped example, and say what finishing sooner is worth to you with a benefit curve.",
  },
  {
    title: "The market decides",
    body: "Every machine's cost grows exponentially with its load. A job is admitted only if its benefit beats the marginal cost of running it; otherwise it waits for capacity or is refused, with the numbers behind the decision.",
  },
];

export default function Home() {
  return (
    <div className="space-y-14">
      <section className="rounded-2xl bg-gradient-to-br from-indigo-600 to-violet-700 px-8 py-14 text-white shadow-lg">
        <p className="text-sm font-medium uppercase tracking-widest text-indigo-200">A computational marketplace on the web</p>
        <h1 className="mt-3 max-w-3xl text-4xl font-semibold tracking-tight">Sell your idle cycles. Buy computation by what it is worth to you.</h1>
        <p className="mt-4 max-w-2xl text-indigo-100">
          Cycle Market turns browser tabs and servers into one pool of compute. Jobs run as WebAssembly in a sandbox; the Market Manager
          admits a job only when its benefit beats the cost of running it, and places each task where it is cheapest.
        </p>
        <div className="mt-8 flex flex-wrap gap-3">
          <Link href="/produce" className="rounded-lg bg-white px-5 py-2.5 text-sm font-semibold text-indigo-700 shadow hover:bg-indigo-50">
            Start producing
          </Link>
          <Link href="/jobs/new" className="rounded-lg bg-indigo-500/40 px-5 py-2.5 text-sm font-semibold text-white ring-1 ring-inset ring-white/40 hover:bg-indigo-500/60">
            Submit a job
          </Link>
        </div>
      </section>

      <section aria-labelledby="how" className="space-y-6">
        <h2 id="how" className="text-xl font-semibold text-slate-900">
          How it works
        </h2>
        <ol className="grid gap-6 md:grid-cols-3">
          {STEPS.map((s, i) => (
            <li key={s.title} className="rounded-xl border border-slate-200 bg-white p-6 shadow-sm">
              <span className="grid h-8 w-8 place-items-center rounded-full bg-indigo-50 text-sm font-semibold text-indigo-700">{i + 1}</span>
              <h3 className="mt-4 font-semibold text-slate-900">{s.title}</h3>
              <p className="mt-2 text-sm leading-6 text-slate-600">{s.body}</p>
            </li>
          ))}
        </ol>
      </section>

      <section className="grid gap-6 md:grid-cols-2">
        <div className="rounded-xl border border-slate-200 bg-white p-6 shadow-sm">
          <h2 className="font-semibold text-slate-900">Try an example job</h2>
          <p className="mt-2 text-sm text-slate-600">
            Estimate pi by Monte Carlo, count primes, or draw the Mandelbrot set tile by tile as producers return them.
          </p>
          <div className="mt-4">
            <ButtonLink href="/jobs/new">New job</ButtonLink>
          </div>
        </div>
        <div className="rounded-xl border border-slate-200 bg-white p-6 shadow-sm">
          <h2 className="font-semibold text-slate-900">Run a worker on a server</h2>
          <p className="mt-2 text-sm text-slate-600">Create an API token on your account page and start a Node worker with one command.</p>
          <div className="mt-4">
            <ButtonLink href="/account" variant="secondary">
              Get a token
            </ButtonLink>
          </div>
        </div>
      </section>
    </div>
  );
}
