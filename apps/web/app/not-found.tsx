import { ButtonLink } from "@/components/ui";

export default function NotFound() {
  return (
    <div className="mx-auto max-w-md py-16 text-center">
      <p className="text-sm font-semibold text-indigo-600">404</p>
      <h1 className="mt-2 text-2xl font-semibold text-slate-900">There is no such page</h1>
      <p className="mt-2 text-sm text-slate-600">The address may be mistyped, or the page has moved.</p>
      <div className="mt-6 flex justify-center gap-2">
        <ButtonLink href="/">Home</ButtonLink>
        <ButtonLink href="/jobs" variant="secondary">
          My jobs
        </ButtonLink>
      </div>
    </div>
  );
}
