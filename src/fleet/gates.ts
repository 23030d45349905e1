// An arm's gates on the worker (`submit --arms N --gate CMD`): bon's gate
// runner (src/bon/gates.ts: `sh -c` in the workspace, its own process group
// under the keeper, bon's timeout) on the tree the run left, in order until
// one fails; what the task stores of each is its exit code and the redacted
// tail of its output. The logs stay in the run's folder (beside the
// workspace, and removed with it, when that is not found).
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { DEFAULT_GATE_TIMEOUT_MS } from "../bon/options.ts";
import { runSteps } from "../bon/gates.ts";
import { secrets } from "../core/redact.ts";
import { readTail } from "../io/tail.ts";
import { GATE_TAIL_CHARS, type GateResult } from "./db.ts";

const GATE_GRACE_MS = 2_000;

/** Run `commands` in `workspace`; the logs go to `runDir` (kept), else beside the workspace (removed). */
export async function taskGates(commands: string[], workspace: string, runDir: string | null, signal: AbortSignal): Promise<GateResult[]> {
  const outcome = await runSteps("gate", {
    cwd: workspace,
    commands,
    timeoutMs: DEFAULT_GATE_TIMEOUT_MS,
    graceMs: GATE_GRACE_MS,
    logPrefix: runDir === null ? workspace : join(runDir, "task"),
    // As bon's: git in a gate never looks above the worker's workspaces (an arm that removed `.git` finds no repository around it).
    env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(workspace) },
    signal,
  });
  return Promise.all(
    outcome.runs.map(async (run) => {
      const tail = secrets.text(await readTail(run.log, GATE_TAIL_CHARS * 4)).slice(-GATE_TAIL_CHARS);
      if (runDir === null) rmSync(run.log, { force: true });
      return { command: run.command, exit_code: run.exit_code, tail };
    }),
  );
}

/** One line for the worker's end line: the gates' outcome. */
export function gatesLine(gates: GateResult[], given: number): string {
  const red = gates.find((g) => g.exit_code !== 0);
  if (red !== undefined) return `; gate \`${red.command}\` ${red.exit_code === null ? "did not finish" : `exited ${red.exit_code}`}`;
  return `; ${gates.length}/${given} gates passed`;
}
