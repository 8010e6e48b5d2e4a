import { pino, type DestinationStream } from "pino";
import type { Log, LogFields } from "../services.ts";

/**
 * The Market Manager's log: one JSON object per line (time, level, msg, and fields such as the
 * request id), through pino. `silent` writes nothing; `debug` adds a line per HTTP request.
 */
export function createLog(level: "silent" | "info" | "debug", destination?: DestinationStream): Log {
  const logger = pino({ level, base: { service: "market-manager" }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
  return (line: string, fields?: LogFields) => {
    const { level: at = "info", ...rest } = fields ?? {};
    logger[at](rest, line);
  };
}
