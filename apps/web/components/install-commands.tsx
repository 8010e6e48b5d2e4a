"use client";
// How to install the market's own worker and client on any machine with Node 20: the market
// serves both as npm package tarballs under /downloads, on this very address.
import { useEffect, useState } from "react";
import Link from "next/link";

export const WORKER_TARBALL = "/downloads/cyclemarket-worker.tgz";
export const CLIENT_TARBALL = "/downloads/cyclemarket-client.tgz";

/** This page's origin once it is in a browser (the address other machines reach the market at). */
export function useOrigin(): string {
  const [origin, setOrigin] = useState("http://localhost:3000");
  useEffect(() => setOrigin(window.location.origin), []);
  return origin;
}

/** The command that starts a Node worker on another machine, with `token` in it (or a placeholder). */
export const workerCommand = (origin: string, token = "<token>") => `npx --yes ${origin}${WORKER_TARBALL} --url ${origin} --token ${token}`;
export const clientCommand = (origin: string) => `npm install ${origin}${CLIENT_TARBALL}`;

function Command({ text, testId }: { text: string; testId: string }) {
  return (
    // Focusable: a long command scrolls sideways, and a keyboard must reach all of it.
    <pre className="mt-1 overflow-x-auto rounded bg-slate-900 p-3 font-mono text-xs text-slate-100" data-testid={testId} tabIndex={0} aria-label="Command">
      {text}
    </pre>
  );
}

/** The worker's command and package, for producers (Account and Produce pages; on the Account page the tokens are made just above). */
export function WorkerInstall({ tokensAbove = false }: { tokensAbove?: boolean }) {
  const origin = useOrigin();
  return (
    <div className="text-sm text-slate-600" data-testid="worker-install">
      <p>
        Sell a server&apos;s cycles with the Node worker: on any machine with Node 20, with a <em>produce</em> token{" "}
        {tokensAbove ? (
          "made above"
        ) : (
          <>
            from the{" "}
            <Link href="/account" className="font-medium text-indigo-700 hover:underline">
              Account page
            </Link>
          </>
        )}
        :
      </p>
      <Command text={workerCommand(origin)} testId="worker-install-command" />
      <p className="mt-1 text-xs">
        The market serves the worker itself:{" "}
        <a href={WORKER_TARBALL} download className="font-medium text-indigo-700 hover:underline" data-testid="worker-download">
          cyclemarket-worker.tgz
        </a>{" "}
        (an npm package; <code>--help</code> lists its options).
      </p>
    </div>
  );
}

/** The client's install command and package, for consumers (Account page). */
export function ClientInstall() {
  const origin = useOrigin();
  return (
    <div className="text-sm text-slate-600" data-testid="client-install">
      <p>
        Submit jobs from a script with the SDK and the <code>cyclemarket</code> command, in any Node 20 project, with a <em>consume</em> token:
      </p>
      <Command text={clientCommand(origin)} testId="client-install-command" />
      <p className="mt-1 text-xs">
        Then <code>import {"{ connect }"} from &quot;@cyclemarket/client&quot;</code> or run <code>npx cyclemarket --help</code>. The package:{" "}
        <a href={CLIENT_TARBALL} download className="font-medium text-indigo-700 hover:underline" data-testid="client-download">
          cyclemarket-client.tgz
        </a>
        .
      </p>
    </div>
  );
}
