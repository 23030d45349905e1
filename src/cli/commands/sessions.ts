import { defineCommand } from "citty";
import { resolve } from "node:path";
import type { Ledger, PhaseRow, SessionRow } from "../../io/ledger.ts";
import { money, totalsOf, type Totals } from "../../core/totals.ts";
import { stateHome } from "../../io/paths.ts";
import { openExistingLedger } from "../agent-options.ts";
import { ledgerPath } from "../../io/ledger.ts";
import { positiveInt, verbosityArgs } from "../common.ts";
import { usageError } from "../errors.ts";
import { setVerbosity, writeResult } from "../output.ts";
import { printable, safeJson } from "../../core/text.ts";

const tokens = (t: { tokens_in: number | null; tokens_out: number | null }, partial = false): string =>
  t.tokens_in === null || t.tokens_out === null ? "-" : `${t.tokens_in}/${t.tokens_out}${partial ? "+" : ""}`;

/** A session with totals over its phases: known figures summed, marked partial when a phase lacks one. */
async function withTotals(ledger: Ledger, session: SessionRow): Promise<SessionRow & { totals: Totals; phases: PhaseRow[] }> {
  const phases = await ledger.phases(session.id);
  return { ...session, totals: totalsOf(phases), phases };
}

function sessionLine(s: SessionRow & { totals: Totals }): string {
  const t = s.totals;
  return printable([s.id, s.agent.padEnd(6), (t.last_status ?? "open").padEnd(9), String(t.phase_count).padStart(3), money(t.cost_micro_usd, t.partial).padStart(10), tokens(t, t.partial).padStart(12), s.declared_at.slice(0, 19), s.cwd].join("  "));
}

export const sessionsCommand = defineCommand({
  meta: { name: "sessions", description: "List the sessions in the ledger, newest first (one JSON object per line with --json)" },
  args: {
    json: { type: "boolean", description: "One JSON object per session per line, with its phases and every column: an export `agentport import` merges (all sessions unless --limit)" },
    agent: { type: "enum", options: ["claude", "pi"], description: "Only this agent's sessions" },
    cwd: { type: "string", description: "Only sessions born in this folder" },
    limit: { type: "string", valueHint: "N", description: "At most N sessions (default 50, all with --json; 0 for all)" },
    home: { type: "string", description: "State folder (else $AGENTPORT_HOME, $XDG_STATE_HOME/agentport, ~/.local/state/agentport)" },
    ...verbosityArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    // An export is complete unless asked otherwise; a listing for the eye is short.
    const limit = args.limit === "0" || (args.json && args.limit === undefined) ? undefined : positiveInt("limit", args.limit, 50);
    // No ledger yet: nothing to list, and nothing is created.
    await using ledger = await openExistingLedger(stateHome(args.home));
    if (ledger === null) return 0;
    const listed = await ledger.listSessions({ agent: args.agent as "pi" | "claude" | undefined, cwd: args.cwd ? resolve(args.cwd) : undefined, limit });
    const rows = await Promise.all(listed.map((row) => withTotals(ledger, row)));
    if (args.json) {
      for (const row of rows) await writeResult(safeJson(row));
    } else if (rows.length > 0) {
      await writeResult(rows.map(sessionLine).join("\n"));
    }
    return 0;
  },
});

function phaseLine(p: PhaseRow): string {
  return printable([`#${p.seq}`, (p.kind ?? "-").padEnd(6), (p.status ?? "running").padEnd(9), money(p.cost_micro_usd).padStart(9), tokens(p).padStart(12), p.seconds === null ? "-" : `${p.seconds.toFixed(1)}s`, p.started_at.slice(0, 19), p.observed_model ?? "-", p.failure ?? ""].join("  "));
}

export const showCommand = defineCommand({
  meta: { name: "show", description: "One session: where it was born, its phases, tokens, cost and status" },
  args: {
    id: { type: "positional", required: true, description: "Session id or a unique prefix" },
    json: { type: "boolean", description: "The session and its phases as one JSON object" },
    home: { type: "string", description: "State folder" },
    ...verbosityArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const home = stateHome(args.home);
    await using ledger = await openExistingLedger(home);
    const found = (await ledger?.resolveSession(args.id)) ?? { kind: "unknown" as const };
    if (found.kind === "unknown" || ledger === null) throw usageError(`no session "${args.id}" in the ledger (${ledgerPath(home)})`);
    if (found.kind === "ambiguous") throw usageError(`"${printable(args.id)}" matches ${found.candidates.length} sessions: ${found.candidates.slice(0, 5).map((s) => printable(s.id)).join(", ")}`);
    const { totals, phases, ...session } = await withTotals(ledger, found.session);
    if (args.json) {
      await writeResult(safeJson({ ...session, totals, phases }));
      return 0;
    }
    const lines = [
      `session   ${session.id} (${session.agent}${session.model ? `, ${session.model}` : ""})`,
      `born in   ${session.cwd}`,
      `declared  ${session.declared_at}`,
    ];
    if (session.session_file) lines.push(`file      ${session.session_file}`);
    if (session.parent_id) lines.push(`parent    ${session.parent_id}`);
    lines.push(`total     ${money(totals.cost_micro_usd, totals.partial)} · ${tokens(totals, totals.partial)} tokens in/out · ${totals.phase_count} phase(s)${totals.partial ? " (partial: a phase reported no cost or tokens)" : ""}`);
    lines.push(...phases.map(phaseLine));
    // The ledger may hold imported strings: nothing in it drives the terminal.
    await writeResult(lines.map(printable).join("\n"));
    return 0;
  },
});
