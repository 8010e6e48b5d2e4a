import { request } from "node:http";
import { fromSetup } from "./global-setup.ts";

// Stops or starts the end-to-end stack's Market Manager (global-setup.ts owns the processes).
function post(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: fromSetup("controlSocket"), method: "POST", path }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => (res.statusCode === 204 ? resolve() : reject(new Error(`${path}: ${res.statusCode} ${body}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

export const stopManager = () => post("/manager/stop");
export const startManager = () => post("/manager/start");
