// The host a session is born on: its hostname (for people) and a stable
// machine id (for the birth-place rule). The id is <home>/machine-id when
// agentport wrote one there (a box without /etc/machine-id), else
// /etc/machine-id, else a new one written once into the home.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

export interface Host {
  hostname: string;
  machineId: string;
}

export const MACHINE_ID_FILE = "machine-id";

function readId(path: string): string | null {
  try {
    const id = readFileSync(path, "utf8").trim();
    return /^[A-Za-z0-9-]{8,}$/.test(id) ? id : null;
  } catch {
    return null;
  }
}

export function thisHost(home: string, systemIdFile = "/etc/machine-id"): Host {
  const own = join(home, MACHINE_ID_FILE);
  let machineId = readId(own) ?? readId(systemIdFile);
  if (machineId === null) {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(own, `${randomUUID().replaceAll("-", "")}\n`, { flag: "wx", mode: 0o600 });
    } catch (error) {
      if (!existsSync(own)) throw error; // another process wrote it first: take theirs
    }
    machineId = readId(own);
    if (machineId === null) throw new Error(`${own}: not a machine id`);
  }
  return { hostname: hostname(), machineId };
}

/** "vm (3d1219c7)": the hostname, and the machine id's start. */
export function hostLabel(host: { hostname: string | null; machineId: string | null }): string {
  return `${host.hostname ?? "?"} (${host.machineId?.slice(0, 8) ?? "?"})`;
}
