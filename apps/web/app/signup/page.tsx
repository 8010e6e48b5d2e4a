import { Suspense } from "react";
import type { Metadata } from "next";
import { SignUpForm } from "@/components/auth-forms";
import { Loading } from "@/components/ui";

export const metadata: Metadata = { title: "Sign up" };

export default function SignUpPage() {
  return (
    <Suspense fallback={<Loading />}>
      <SignUpForm />
    </Suspense>
  );
}
