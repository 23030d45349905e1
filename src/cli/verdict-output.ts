// The end of a run on the terminal: the result on stdout, the reason on stderr.
import type { Verdict } from "../core/verdict.ts";
import { log, writeResult } from "./output.ts";

export async function printVerdict(verdict: Verdict, json: boolean, runDir?: string): Promise<void> {
  if (json) await writeResult(JSON.stringify(verdict));
  else if (verdict.ok && verdict.text !== null) await writeResult(verdict.text);
  if (!verdict.ok) log.error(`${verdict.status}: ${verdict.failure?.message ?? "no reason given"}`);
  else if (typeof verdict.summary.warning === "string") log.warn(`after the envelope: ${verdict.summary.warning}`);
  for (const refused of verdict.refused) log.warn(`refused ${refused.kind}: ${refused.subject || "(unnamed)"}`);
  const cost = verdict.cost_micro_usd === null ? "" : ` · $${(verdict.cost_micro_usd / 1e6).toFixed(4)}`;
  const tokens = verdict.tokens === null ? "" : ` · ${verdict.tokens.input} in / ${verdict.tokens.output} out`;
  log.info(`${verdict.agent} ${verdict.status}${cost}${tokens}${verdict.session_id ? ` · session ${verdict.session_id}` : ""}`);
  if (runDir) log.debug(`run folder: ${runDir}`);
}
