/** Fields beside a log line: its level (info unless said) and what it is about, such as the request id. */
export interface LogFields {
  level?: "debug" | "info" | "warn" | "error";
  requestId?: string;
  [field: string]: unknown;
}

/** The market's log (ops/log.ts writes it as JSON lines); plain `log("...")` calls are info lines. */
export type Log = (line: string, fields?: LogFields) => void;
