// Reading the .env of the folder an agent runs in.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseDotenv } from "../core/env.ts";

export function readDotenv(cwd: string): Record<string, string> {
  const path = join(cwd, ".env");
  if (!existsSync(path)) return {};
  return parseDotenv(readFileSync(path, "utf8"));
}
