// The self-test's checks of the agents through the adapter table: each runs
// its fake through the same row a real run takes (argv, probe, reducer,
// judge, ledger), offline and at zero tokens.
import { join } from "node:path";
import type { AgentName } from "../core/agents.ts";
import type { Verdict } from "../core/verdict.ts";
import type { FakeName } from "../core/agents.ts";
import type { RunOutcome } from "../agents/phase.ts";
import { adapterOf } from "../agents/table.ts";
import { connectLedger, type SessionRow } from "../io/ledger.ts";
import { agentSetup } from "./agent-options.ts";

export interface AgentCheckContext {
  dir: string;
  home: string;
  fakes: Record<FakeName, string>;
}

export interface AgentCheck {
  name: string;
  run: (ctx: AgentCheckContext) => Promise<void>;
}

/** A self-test check that did not hold: its message is the check's line. One for every check, the agents' and selftest's own. */
export class CheckFailed extends Error {}

export function expect(condition: boolean, what: string): void {
  if (!condition) throw new CheckFailed(what);
}

const said = (v: Verdict) => `status ${v.status}: ${v.failure?.message ?? "no failure"}`;

/** One phase of `agent` through its row of the adapter table, its fake playing `scenario`, with these flags and more environment. */
export async function phase(
  ctx: AgentCheckContext,
  agent: AgentName,
  scenario: string,
  resume?: SessionRow,
  flags: Record<string, string | boolean> = {},
  env: Record<string, string> = {},
): Promise<{ outcome: RunOutcome; session: SessionRow | null }> {
  const adapter = adapterOf(agent);
  const setup = agentSetup({ flags: { agent, home: ctx.home, timeout: "20", linger: "0.2", ...flags } }, ctx.dir, {
    config: null,
    env: {},
  });
  // The fake gemini, like the real one, refuses a folder it does not trust; this one is the self-test's own.
  // Its own HOME: the fakes keep their threads and sessions there, never in the user's.
  const home = join(ctx.dir, "agent-home");
  setup.common.env = {
    ...setup.common.env,
    ...env,
    AGENTPORT_FAKE_SCENARIO: scenario,
    GEMINI_CLI_TRUST_WORKSPACE: "true",
    HOME: home,
    CODEX_HOME: join(home, ".codex"),
  };
  await using ledger = await connectLedger(ctx.home);
  const outcome = await adapter.run(ledger, setup, { bin: ctx.fakes[adapter.fake], prompt: "selftest", resume });
  return { outcome, session: await ledger.getSession(outcome.verdict.session_id ?? "") };
}

export const AGENT_CHECKS: AgentCheck[] = [
  {
    name: "codex: a tool run; its refusal, invisible in the stream, counted from stderr; the thread bound as it arrives",
    async run(ctx) {
      const { outcome, session } = await phase(ctx, "codex", "tool");
      const v = outcome.verdict;
      expect(outcome.exitCode === 0 && v.ok && v.text === "All done.", said(v));
      expect(v.refused.length === 1 && v.summary.refused_seen_in === "stderr", `refused: ${JSON.stringify(v.refused)}`);
      expect(v.cost_micro_usd === null, `cost was ${v.cost_micro_usd}, not null`);
      expect(
        session !== null && session.agent_session_id === v.summary.thread_id && session.agent_session_id !== session.id,
        `ledger row ${JSON.stringify(session)}`,
      );
    },
  },
  {
    name: "codex: a resume continues the thread and counts only its own tokens of codex's running total",
    async run(ctx) {
      const first = await phase(ctx, "codex", "memory");
      expect(first.outcome.verdict.ok && first.session !== null, said(first.outcome.verdict));
      const again = await phase(ctx, "codex", "memory", first.session ?? undefined);
      const v = again.outcome.verdict;
      expect(v.ok && v.text === "The word was BLUE." && v.summary.thread_id === first.outcome.verdict.summary.thread_id, said(v));
      expect(
        v.tokens?.input === 1000 && v.tokens.cache_read === 200 && v.tokens.output === 7,
        `tokens were ${JSON.stringify(v.tokens)} (codex's total: ${v.summary.thread_input_tokens})`,
      );
    },
  },
  {
    name: "gemini: a tool run with a refused call; the session id chosen, declared and echoed",
    async run(ctx) {
      const { outcome, session } = await phase(ctx, "gemini", "tool");
      const v = outcome.verdict;
      expect(outcome.exitCode === 0 && v.ok && v.text === "All done.", said(v));
      expect(
        v.refused.length === 1 && v.refused[0]?.subject === "run_shell_command (not offered)",
        `refused: ${JSON.stringify(v.refused)}`,
      );
      expect(session !== null && session.agent_session_id === session.id, `ledger row ${JSON.stringify(session)}`);
    },
  },
  {
    name: "gemini: the verdict is result.status: a crash with no result record fails, whatever the exit code",
    async run(ctx) {
      const { outcome } = await phase(ctx, "gemini", "crash");
      const v = outcome.verdict;
      expect(outcome.exitCode === 1 && v.status === "crashed", said(v));
    },
  },
  {
    name: "opencode: a permission auto-rejected before exit 0 is not ok; its ses_ id learned from the first record and bound",
    async run(ctx) {
      const { outcome, session } = await phase(ctx, "opencode", "tool");
      const v = outcome.verdict;
      expect(v.status === "failed" && v.failure?.kind === "agent_error", said(v));
      expect(v.refused.length === 1 && v.refused[0]?.subject === "bash (auto-rejected)", `refused was ${JSON.stringify(v.refused)}`);
      expect(
        (session?.agent_session_id ?? "").startsWith("ses_") && session?.agent_session_id !== session?.id,
        `agent session ${session?.agent_session_id}`,
      );
    },
  },
  {
    name: "opencode: no terminal record: a step ending stop is the run's end, and a resume continues the same session",
    async run(ctx) {
      const first = await phase(ctx, "opencode", "memory");
      expect(first.outcome.verdict.ok && first.outcome.verdict.text === "Noted: BLUE.", said(first.outcome.verdict));
      const again = await phase(ctx, "opencode", "memory", first.session ?? undefined);
      expect(again.outcome.verdict.text === "The word was BLUE.", said(again.outcome.verdict));
      expect(
        again.outcome.verdict.summary.opencode_session_id === first.outcome.verdict.summary.opencode_session_id,
        "a resume answered on another opencode session",
      );
    },
  },
  {
    name: "opencode --serve: over the fake server (its password required), a permission rejected over HTTP is refused and recorded, the model goes on; the session bound before the prompt",
    async run(ctx) {
      const { outcome, session } = await phase(ctx, "opencode", "tool", undefined, { serve: true });
      const v = outcome.verdict;
      expect(outcome.exitCode === 0 && v.ok && v.text === "All done." && v.summary.serve === true, said(v));
      expect(
        v.refused.length === 1 && v.refused[0]?.subject === "bash: touch outside.txt (rejected)",
        `refused was ${JSON.stringify(v.refused)}`,
      );
      expect(
        (session?.agent_session_id ?? "").startsWith("ses_") && session?.agent_session_id === v.summary.opencode_session_id,
        `agent session ${session?.agent_session_id}`,
      );
    },
  },
  {
    name: "opencode --serve: a resume over a new server continues the same session; a cut stream is stopped as a loop and aborted",
    async run(ctx) {
      const first = await phase(ctx, "opencode", "memory", undefined, { serve: true });
      expect(first.outcome.verdict.ok && first.outcome.verdict.text === "Noted: BLUE.", said(first.outcome.verdict));
      const again = await phase(ctx, "opencode", "memory", first.session ?? undefined, { serve: true });
      expect(again.outcome.verdict.text === "The word was BLUE.", said(again.outcome.verdict));
      const loop = await phase(ctx, "opencode", "loop", undefined, { serve: true });
      expect(loop.outcome.verdict.status === "looping" && loop.outcome.exitCode === 4, said(loop.outcome.verdict));
    },
  },
  {
    name: "acp: over ACP with the fake agent, a permission request rejected by the policy and recorded; the agent's session id bound; a timeout sends session/cancel and the prompt comes back cancelled",
    async run(ctx) {
      const command = { "acp-command": ctx.fakes["fake-acp"] };
      const { outcome, session } = await phase(ctx, "acp", "permission", undefined, command);
      const v = outcome.verdict;
      expect(outcome.exitCode === 0 && v.ok && v.text === "Done." && v.summary.agent_name === "fake-acp", said(v));
      expect(
        v.refused.length === 1 && v.refused[0]?.subject.startsWith("edit made-by-fake.txt: rejected") === true,
        `refused was ${JSON.stringify(v.refused)}`,
      );
      expect((session?.agent_session_id ?? "").startsWith("fake-acp-"), `agent session ${session?.agent_session_id}`);
      // Long enough for the fake to start and take the prompt on a loaded machine: the cancel is sent only to a prompt in flight.
      const hang = await phase(ctx, "acp", "hang", undefined, { ...command, timeout: "1.5" });
      const h = hang.outcome.verdict;
      expect(h.status === "timeout" && h.stop_reason === "cancelled" && h.summary.cancel_sent === true, said(h));
    },
  },
];
