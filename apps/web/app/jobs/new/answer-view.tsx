import Link from "next/link";
import { DecisionView, type DecisionRecord } from "@/components/decision";

/** What the market answered a quote or a submission, with a link to the job when one was made. */
export interface Answer {
  kind: "quote" | "decision";
  decision: DecisionRecord;
  jobId?: string;
}

export function AnswerView({ answer }: { answer: Answer }) {
  return (
    <div className="space-y-3">
      <DecisionView decision={answer.decision} title={answer.kind === "quote" ? "Quote" : "Decision"} testId={answer.kind === "quote" ? "quote" : "decision"} />
      {answer.jobId ? (
        <Link href={`/jobs/${answer.jobId}`} className="block text-sm font-medium text-indigo-600 hover:underline">
          View the job →
        </Link>
      ) : null}
    </div>
  );
}
