// A producer caught forging (costbenefit quorum.ts `forgers`) loses the pay of every task of that
// job it ran: what the job paid it goes to the market's account (ledger/entries.ts forfeit), as far
// as its earnings still hold it, once per job and producer (the entry's unique key).
import { forfeit } from "../ledger/entries.ts";
import { post, type Tx } from "../ledger/ledger.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { paidForJob } from "../db/sql/forfeit.ts";
import { runStatement } from "../db/sql/statement.ts";

export async function forfeitPay(tx: Tx, f: { jobId: string; producerId: string; taskId: string; now: number }): Promise<bigint> {
  const [row] = await runStatement(viaPrisma(tx), paidForJob, { jobId: f.jobId, producerId: f.producerId });
  const paid = BigInt(row?.paid ?? 0n);
  const held = BigInt(row?.balance ?? 0n);
  const amount = paid < held ? paid : held > 0n ? held : 0n;
  // What this call moved: nothing when the job's forfeit of this producer was posted already (its unique key).
  const posted = await post(tx, forfeit({ jobId: f.jobId, taskId: f.taskId, producerId: f.producerId, amount, paidMicro: paid }));
  return posted ? amount : 0n;
}
