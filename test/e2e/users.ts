import { readFileSync } from "node:fs";
import { expect, type Page } from "@playwright/test";
import { fromSetup } from "./global-setup.ts";
import { verificationLink } from "../support/outbox.ts";

// Users for the end-to-end specs: the market global-setup started, and sign-up as a person does.

export const stack = () => JSON.parse(readFileSync(fromSetup("stackFile"), "utf8")) as { admin: { email: string; password: string } | null; outbox: string };

/** The sign-up form's choices of roles. */
const ROLE_CHOICE = { both: /both/i, producer: /sell cycles/i, consumer: /buy computation/i } as const;

/**
 * Signs up through the page (as both a producer and a consumer unless told), then follows the
 * link the market mailed, as a new user does; `outbox` is the shared market's unless a spec runs its own.
 */
export async function signUp(page: Page, name: string, email: string, roles: keyof typeof ROLE_CHOICE = "both", outbox = () => stack().outbox) {
  await page.goto("/signup");
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("a long enough password");
  await page.getByRole("radio", { name: ROLE_CHOICE[roles] }).check();
  await page.getByRole("button", { name: /sign up|create/i }).click();
  await expect(page.getByTestId("signed-in-user")).toContainText(name);
  await expect(page.getByTestId("verify-email")).toContainText(email);
  // The market mails nothing over the network: the notice says where the link is.
  await expect(page.getByTestId("verify-email")).toContainText(".data/outbox.jsonl");
  await page.goto(verificationLink(outbox(), email));
  await expect(page.getByTestId("signed-in-user")).toContainText(name);
  await expect(page.getByTestId("verify-email")).toHaveCount(0);
}

/** Signs in through the page as someone who already has an account (the admin global setup printed). */
export async function signIn(page: Page, email: string, password: string) {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: /sign in/i }).click();
  await expect(page.getByTestId("signed-in-user")).toBeVisible();
  // The form then opens the account's landing page: let it, so the caller's next goto is not overtaken.
  await page.waitForURL((url) => url.pathname !== "/signin");
}
