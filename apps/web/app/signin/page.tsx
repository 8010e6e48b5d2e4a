import { Suspense } from "react";
import type { Metadata } from "next";
import { SignInForm } from "@/components/auth-forms";
import { Loading } from "@/components/ui";

export const metadata: Metadata = { title: "Sign in" };

export default function SignInPage() {
  return (
    <Suspense fallback={<Loading />}>
      <SignInForm />
    </Suspense>
  );
}
