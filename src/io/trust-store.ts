// Where `agentport trust` records what the user trusted: a file in the home
// (<home>/trusted-configs.json), never in a ledger another home can write to
// (a shared PostgreSQL). Written whole to a new file, then renamed over the
// old one (a planted symlink is replaced, never written through).
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { lazySchema } from "../core/lazy-schema.ts";
import type { TrustRecord, TrustRecords } from "../config/trust.ts";

export const TRUST_FILE = "trusted-configs.json";

const StoreSchema = lazySchema((z) =>
  z.record(z.string(), z.strictObject({ sha256: z.string(), trusted_at: z.string(), files: z.record(z.string(), z.string().nullable()) })),
);
type Store = Record<string, TrustRecord & { trusted_at: string }>;

/** The trust file is there but unreadable: nothing in it is trusted. */
export class TrustStoreError extends Error {
  override readonly name = "TrustStoreError";
}

function readStore(home: string): Store {
  const path = join(home, TRUST_FILE);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new TrustStoreError(
      `${path}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): no found config is trusted`,
    );
  }
  try {
    return StoreSchema.parse(JSON.parse(text)) as Store;
  } catch {
    throw new TrustStoreError(`${path}: not a trust record file: no found config is trusted until \`agentport trust\` writes it again`);
  }
}

/** The records of this home (read once). */
export function trustRecords(home: string): TrustRecords {
  const store = readStore(home);
  return { trusted: (path) => (Object.hasOwn(store, path) ? (store[path] ?? null) : null) };
}

/** Record `path` as trusted with its sha256 and those of the files it names (a damaged store starts afresh). */
export function recordTrust(home: string, path: string, record: TrustRecord): void {
  let store: Store;
  try {
    store = readStore(home);
  } catch (error) {
    if (!(error instanceof TrustStoreError)) throw error;
    store = {};
  }
  store[path] = { ...record, trusted_at: new Date().toISOString() };
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const file = join(home, TRUST_FILE);
  const fresh = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(fresh, `${JSON.stringify(store, null, 2)}\n`, { flag: "wx", mode: 0o600 });
    renameSync(fresh, file);
  } catch (error) {
    try {
      unlinkSync(fresh);
    } catch {
      // Never written.
    }
    throw error;
  }
}

/** The sha256 of a regular file's bytes, read in chunks; null when there is none; "not a file" for anything else (a FIFO is never waited on). */
export function fileDigest(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return "not a file";
    const hash = createHash("sha256");
    const buffer = Buffer.alloc(1 << 16);
    for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) hash.update(buffer.subarray(0, n));
    return hash.digest("hex");
  } finally {
    closeSync(fd);
  }
}
