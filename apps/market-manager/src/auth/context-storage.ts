// The sign-in library keeps each call's context in AsyncLocalStorage. On this Node, a storage that
// has run once stays enabled, and while any is enabled every promise the process makes runs a
// hook to carry it along: with the market's thousands of promises a second that cost a visible
// share of the manager's CPU per task (bench:dispatch --profile shows it), for sign-ins and
// session reads that are rare (one per signed-in user every ten seconds at most, session-cache.ts). So the library's storages are enabled only while one of its
// calls is running: each entry point counts itself in and out, and when the last one is out they
// are disabled (the next call's run enables them again). Its calls are all awaited by their
// caller (no background work outlives them without the optional background handler, which the
// market does not set), so nothing of theirs reads a storage after it was released.
import { AsyncLocalStorage } from "node:async_hooks";

/** Where the library keeps its storages (one object per process, shared by every copy of it). */
const LIBRARY_GLOBAL = Symbol.for("better-auth:global");

let running = 0;

function releaseStorages() {
  const context = (globalThis as Record<symbol, { context?: Record<string, unknown> } | undefined>)[LIBRARY_GLOBAL]?.context;
  if (!context) return;
  for (const storage of Object.values(context)) if (storage instanceof AsyncLocalStorage) storage.disable();
}

async function counted<T>(call: () => Promise<T>): Promise<T> {
  running++;
  try {
    return await call();
  } finally {
    if (--running === 0) releaseStorages();
  }
}

/** `auth` whose `handler` and every `api` endpoint release the storages once no call is running. */
export function releasingStorages<A extends { handler: (request: Request) => Promise<Response>; api: object }>(auth: A): A {
  const api = new Proxy(auth.api, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      // The endpoint is a function with properties of its own (its path, options): kept reachable.
      return Object.assign((...args: unknown[]) => counted(() => Promise.resolve(value.apply(target, args))), value);
    },
  });
  return { ...auth, api, handler: (request: Request) => counted(() => auth.handler(request)) };
}

/** How many of the library's calls are running (tests). */
export const authCallsRunning = () => running;
