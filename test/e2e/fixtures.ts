import { expect, test as base, type BrowserContext, type Page } from "@playwright/test";

// The specs' `test`: the built-in one, failing any test in which a page broke the web app's
// Content-Security-Policy (a script, style, worker, WebAssembly module or connection it refused)
// in any browser context the test opened. Chromium logs each refusal; the pages also report
// their `securitypolicyviolation` events, which name the directive and what it blocked, and so
// do their Web Workers (watchWorkers).

export { expect };
export type { Browser, Page } from "@playwright/test";

const VIOLATION = /Content Security Policy/i;

/** Everything a context's pages say went wrong, from the moment it opens: policy refusals and other errors. */
export async function watchErrors(context: BrowserContext, into = { policy: [] as string[], errors: [] as string[] }) {
  const { policy, errors } = into;
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      console.error(`Content Security Policy violation: ${e.effectiveDirective} blocked ${e.blockedURI || "inline"} in ${e.sourceFile || e.documentURI}:${e.lineNumber}`);
    });
  });
  context.on("console", (message) => {
    if (message.type() !== "error") return;
    const where = `${message.page()?.url() ?? "a worker"}: ${message.text()}`;
    (VIOLATION.test(message.text()) ? policy : errors).push(where);
  });
  context.on("weberror", (error) => errors.push(`${error.page()?.url() ?? "a worker"}: ${error.error().message}`));
  context.on("page", (page) => void watchWorkers(page));
  return into;
}

/** What a worker runs before its first line: its refusals logged as a page's are (the context hears a worker's console). */
const REPORT_WORKER_VIOLATIONS = `self.addEventListener("securitypolicyviolation", (e) => console.error(
  "Content Security Policy violation in a worker: " + e.effectiveDirective + " blocked " + (e.blockedURI || "inline") + " in " + (e.sourceFile || self.location.href) + ":" + e.lineNumber))`;

/**
 * A page's Web Workers (the /produce page's sandbox) run under their own scripts' policy, fire
 * their refusals on their own scope, where no init script runs, and may refuse something in
 * their first line (the sandbox compiles its benchmark at once). So the page's DevTools session
 * holds each worker before it starts, adds the listener, then lets it run. Chromium only.
 */
async function watchWorkers(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  let id = 0;
  cdp.on("Target.attachedToTarget", ({ sessionId, targetInfo }) => {
    const send = (method: string, params: object = {}) => cdp.send("Target.sendMessageToTarget", { sessionId, message: JSON.stringify({ id: ++id, method, params }) });
    const listen = targetInfo.type === "worker" ? send("Runtime.evaluate", { expression: REPORT_WORKER_VIOLATIONS }) : Promise.resolve();
    // Whatever happened, the worker (or frame) is let go: a held one would hang the page.
    void listen.finally(() => send("Runtime.runIfWaitingForDebugger")).catch(() => {});
  });
  await cdp.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: false }).catch(() => {}); // a page already closed
}

export const test = base.extend<{ policyViolations: void }, { refusals: string[] }>({
  // Every context the worker's browser opens is watched: the test's own and those a test opens itself.
  refusals: [
    async ({ browser }, use) => {
      const refusals: string[] = [];
      const newContext = browser.newContext.bind(browser);
      browser.newContext = async (options) => {
        const context = await newContext(options);
        await watchErrors(context, { policy: refusals, errors: [] });
        return context;
      };
      await use(refusals);
      browser.newContext = newContext;
    },
    { scope: "worker" },
  ],
  policyViolations: [
    async ({ refusals }, use) => {
      const before = refusals.length;
      await use();
      expect(refusals.slice(before), "the pages broke the Content-Security-Policy").toEqual([]);
    },
    { auto: true },
  ],
});
