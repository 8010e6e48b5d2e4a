"use client";
import { createAuthClient } from "better-auth/react";

// Better Auth runs inside the Market Manager; the browser reaches it at /api/auth on this
// origin (the default base path), so the session cookie is first-party.
export const authClient = createAuthClient({
  baseURL: typeof window === "undefined" ? "http://localhost:3000" : window.location.origin,
});
