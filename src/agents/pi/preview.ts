// The argv a pi run would start with, for `agentport config`: from the probe
// the ledger has cached for this pi, else pi 0.73.1's flags (ground truth).
import { join } from "node:path";
import { appendedSystemPrompt, envelopeInstructions } from "../../core/instructions.ts";
import { parseCapabilities } from "../../core/pi/capabilities.ts";
import { ENVELOPE_TOOL } from "../../core/pi/reducer.ts";
import { piThinking, piTools } from "../../core/translate.ts";
import type { Ledger } from "../../io/ledger.ts";
import { SESSION_PLACEHOLDER, type Preview } from "../adapter.ts";
import { piArgv } from "../../core/pi/argv.ts";
import { cachedPi } from "./probe.ts";
import { agentExtras, type AgentSetup } from "../setup.ts";

/** pi 0.73.1's flags: what a preview assumes when no probe is cached. */
const ASSUMED_PI = parseCapabilities(
  "0.73.1",
  "--session --session-dir --fork --no-skills --no-prompt-templates --no-context-files --tools --thinking --offline --extension --append-system-prompt",
);

export async function piPreview(setup: AgentSetup, bin: string, ledger: Ledger | null): Promise<Preview> {
  const cached = ledger === null ? null : await cachedPi(bin, ledger);
  const caps = cached ?? ASSUMED_PI;
  const pi = setup.pi;
  const instructions = setup.schema === null ? null : envelopeInstructions(setup.schema, { tool: ENVELOPE_TOOL });
  const argv = piArgv({
    bin,
    caps,
    mode: "json",
    sessionDir: pi.sessionDir,
    sessionId: SESSION_PLACEHOLDER,
    sessionFile: join(pi.sessionDir, "<new session file>.jsonl"),
    model: setup.model,
    gateway: pi.gateway,
    direct: pi.direct,
    thinking: piThinking(setup.thinking),
    tools: pi.tools && piTools(pi.tools),
    extensions: setup.schema !== null || pi.requireExt.length > 0 ? [join(setup.common.home, "extensions", "agentport.ts")] : [],
    envelopeTool: setup.schema !== null ? ENVELOPE_TOOL : undefined,
    appendSystemPrompt: appendedSystemPrompt(setup.appendSystemPrompt, instructions),
    passThrough: agentExtras(setup).passThrough,
  });
  return { argv, probed: cached?.version ?? null };
}
