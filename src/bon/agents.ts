// The batch's agent, made once the ledger is open: pi probed (its dialect
// cached in the ledger) with its extension and envelope schema written; or
// opencode, one-shot or over one server; or any agent (a cross-agent batch
// too) through `run`'s path, each arm from the spec.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeExtension } from "../agents/pi/extension.ts";
import { probePi } from "../agents/pi/probe.ts";
import type { Ledger } from "../io/ledger.ts";
import { OpencodeOneShot } from "./opencode-oneshot.ts";
import { OpencodeServed } from "./opencode-served.ts";
import type { BonOptions } from "./options.ts";
import { PiAgent } from "./pi-agent.ts";
import { PiSessions } from "./pi-sessions.ts";
import { RunPathAgent } from "./run-path.ts";
import { errorMessage, type BonAgent } from "./sessions.ts";

export interface BatchPlace {
  id: string;
  runDir: string;
  gitCeiling: Record<string, string>;
}

export async function makeAgent(o: BonOptions, ledger: Ledger, batch: BatchPlace): Promise<BonAgent> {
  if (o.agent === "opencode") return o.serve ? new OpencodeServed(o, batch) : new OpencodeOneShot(o, batch);
  if (o.agent !== "pi") return new RunPathAgent(o, ledger, batch);
  let caps = o.caps;
  if (caps === undefined) {
    try {
      caps = await probePi(o.bin, ledger, o.env);
    } catch (error) {
      throw new Error(`pi probe: ${errorMessage(error)}`);
    }
  }
  const schemaFile = join(batch.runDir, "envelope.schema.json");
  writeFileSync(schemaFile, JSON.stringify(o.schema, null, 2));
  const extension = writeExtension(join(o.home, "extensions"));
  return new PiAgent(o, caps, new PiSessions(o, caps, { ...batch, extension, schemaFile }));
}
