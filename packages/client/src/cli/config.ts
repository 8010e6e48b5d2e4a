import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

// `cyclemarket login` keeps the market's URL and a consume token here, readable only by the user.

export interface SavedLogin {
  url: string;
  token: string;
  email?: string;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "cyclemarket");
}

export const configFile = (env: NodeJS.ProcessEnv = process.env) => join(configDir(env), "config.json");

export function readLogin(env: NodeJS.ProcessEnv = process.env): Partial<SavedLogin> {
  const file = configFile(env);
  if (!existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Partial<SavedLogin>;
  } catch {
    return {};
  }
}

export function saveLogin(login: SavedLogin, env: NodeJS.ProcessEnv = process.env): string {
  mkdirSync(configDir(env), { recursive: true, mode: 0o700 });
  const file = configFile(env);
  writeFileSync(file, JSON.stringify(login, null, 2) + "\n", { mode: 0o600 });
  chmodSync(file, 0o600); // an existing file keeps its old mode otherwise
  return file;
}
