import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Log } from "../log.ts";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** The one link the mail is about (verification), for a reader that only wants that. */
  link?: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/**
 * The development mailer: every mail is printed to the Market Manager's log and appended as one
 * JSON line to an outbox file beside the data, where a developer (or an end-to-end test) finds
 * the verification link. A deployment that sends real mail implements `Mailer` over its provider.
 */
export function consoleMailer(outboxFile: string, log: Log): Mailer {
  return {
    async send(mail) {
      mkdirSync(dirname(outboxFile), { recursive: true });
      appendFileSync(outboxFile, `${JSON.stringify({ ...mail, at: new Date().toISOString() })}\n`, { mode: 0o600 });
      log(`mail to ${mail.to}: ${mail.subject}${mail.link ? ` - ${mail.link}` : ""}`);
    },
  };
}
