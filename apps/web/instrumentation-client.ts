import { z } from "zod";

// Runs in the browser before any of the app's own modules (Next.js's client instrumentation).
// zod compiles object schemas with `new Function` when it may, and finds out by trying once as
// its first schema is built, which the pages' Content-Security-Policy (no 'unsafe-eval', see
// lib/csp.ts) refuses and reports: tell it not to try.
z.config({ jitless: true });
