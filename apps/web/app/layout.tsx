import type { Metadata } from "next";
import type { ReactNode } from "react";
import { connection } from "next/server";
import { Providers } from "@/lib/providers";
import { Header } from "@/components/header";
import { VerifyEmailNotice } from "@/components/verify-notice";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Cycle Market", template: "%s · Cycle Market" },
  description: "A computational marketplace: sell idle cycles from a browser tab, buy computation by the benefit curve.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page renders per request: its scripts carry that request's CSP nonce (proxy.ts), which
  // a page built ahead of time could not.
  await connection();
  return (
    <html lang="en">
      <body className="min-h-screen font-sans">
        <Providers>
          <Header />
          <VerifyEmailNotice />
          <main className="mx-auto max-w-6xl px-4 py-6 sm:px-6 sm:py-10">{children}</main>
          <footer className="mx-auto max-w-6xl px-4 pb-10 text-xs text-slate-500 sm:px-6">
            Cycle Market: jobs are admitted when their benefit beats the marginal cost of running them.
          </footer>
        </Providers>
      </body>
    </html>
  );
}
