// A phase's finish that the ledger would not take (a full disk) is not lost:
// when the phase starts, a small file is reserved in the state folder (its
// blocks written while there is room); when the finish cannot be committed it
// is written over those blocks — which needs no new space — and the next
// agentport that can write the ledger commits it and removes the file.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import { lazySchema } from "../core/lazy-schema.ts";
import { STATUSES } from "../core/verdict.ts";
import type { FinishPhaseInput, Ledger } from "./ledger.ts";

// A finish is a few hundred bytes; its failure and details are cut to fit.
const RESERVED_BYTES = 16 * 1024;
const FIELD_LIMIT = 2_000;

const StoredFinishSchema = lazySchema((z) => {
  const scalar = z.union([z.string(), z.number(), z.boolean()]);
  const count = z.number().int().nonnegative();
  return z.object({
    phaseId: z.number().int(),
    sessionId: z.string(),
    seq: z.number().int(),
    finish: z.object({
      status: z.enum(STATUSES),
      ok: z.boolean(),
      tokens: z.object({ input: count, output: count, cache_read: count, cache_write: count }).nullable(),
      costMicroUsd: count.nullable(),
      seconds: z.number().nullable(),
      stopReason: z.string().nullable(),
      failure: z.string().nullable(),
      details: z.record(z.string(), scalar).nullable().optional(),
    }),
  });
});
type StoredFinish = z.infer<typeof StoredFinishSchema>;

export function unrecordedDir(home: string): string {
  return join(home, "unrecorded");
}

export interface Reservation {
  /** Write the finish over the reserved blocks; false when even that failed. */
  keep(finish: FinishPhaseInput): boolean;
  /** The finish was committed: the reservation goes. */
  release(): void;
}

const cut = (text: string | null): string | null => (text === null || text.length <= FIELD_LIMIT ? text : `${text.slice(0, FIELD_LIMIT)}…`);

/** Reserve room for the finish of phase `phaseId` (session, seq); null when there is no room now either. */
export function reserveFinish(home: string, phase: { id: number; session_id: string; seq: number }): Reservation | null {
  const dir = unrecordedDir(home);
  const path = join(dir, `${phase.id}-${phase.session_id}-${phase.seq}.json`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const fd = openSync(path, "w", 0o600);
    try {
      writeSync(fd, Buffer.alloc(RESERVED_BYTES, " "));
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  const release = () => {
    try {
      unlinkSync(path);
    } catch {
      // gone already
    }
  };
  return {
    release,
    keep(finish) {
      const stored: StoredFinish = {
        phaseId: phase.id,
        sessionId: phase.session_id,
        seq: phase.seq,
        finish: { ...finish, failure: cut(finish.failure), stopReason: cut(finish.stopReason) },
      };
      let bytes = Buffer.from(JSON.stringify(stored));
      if (bytes.length > RESERVED_BYTES) bytes = Buffer.from(JSON.stringify({ ...stored, finish: { ...stored.finish, details: null } }));
      if (bytes.length > RESERVED_BYTES) return false;
      try {
        // "r+": over the reserved blocks, never truncating; the spaces after the JSON are ignored.
        const fd = openSync(path, "r+");
        try {
          writeSync(fd, bytes, 0, bytes.length, 0);
        } finally {
          closeSync(fd);
        }
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** Whether some finish may be kept aside in `home` (a reservation, blank or written). */
export function hasKept(home: string): boolean {
  const dir = unrecordedDir(home);
  return existsSync(dir) && readdirSync(dir).length > 0;
}

/**
 * Commit the finishes kept for phases that are still open in the ledger, and
 * remove every kept file whose phase is finished (or unknown). A reservation
 * still blank belongs to a running phase, or to one the reaper ends: left to it.
 * Returns how many finishes were committed.
 */
export async function commitKept(home: string, ledger: Ledger): Promise<number> {
  const dir = unrecordedDir(home);
  if (!existsSync(dir)) return 0;
  let committed = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    let stored: StoredFinish;
    try {
      const text = readFileSync(path, "utf8").trim();
      if (text === "") continue;
      stored = StoredFinishSchema.parse(JSON.parse(text));
    } catch {
      continue; // being written, or not ours: never a reason to fail a command
    }
    const phase = await ledger.getPhase(stored.phaseId);
    const same = phase !== null && phase.session_id === stored.sessionId && phase.seq === stored.seq;
    try {
      if (same && phase.ended_at === null) {
        await ledger.finishPhase(stored.phaseId, { ...stored.finish, details: { ...(stored.finish.details ?? {}), recorded_late: true } });
        committed++;
      }
      unlinkSync(path);
    } catch {
      // still no room: the next command tries again
    }
  }
  return committed;
}

/** Forget the reservation of a phase the reaper finished. */
export function dropReservation(home: string, phase: { id: number; session_id: string; seq: number }): void {
  try {
    unlinkSync(join(unrecordedDir(home), `${phase.id}-${phase.session_id}-${phase.seq}.json`));
  } catch {
    // there was none
  }
}
