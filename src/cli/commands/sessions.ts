import { defineCommand } from "citty";
import { resolve } from "node:path";
import { AGENT_NAMES, type AgentName } from "../../core/agents.ts";
import { exportSessions, type HostCount, type PhaseRow, type SessionWithTotals } from "../../io/ledger.ts";
import { hostLabel } from "../../io/host.ts";
import { ledgerCommandArgs, openExistingLedger } from "../ledger-option.ts";
import { projectLedger } from "../agent-options.ts";
import { positiveInt } from "../common.ts";
import { openNamedSession, SESSION_ID_ARG } from "../session-arg.ts";
import { log, setVerbosity, writeResult } from "../output.ts";
import { printable, safeJson } from "../../core/text.ts";
import { money, totalsOf, type Totals } from "../../core/totals.ts";

const tokens = (t: { tokens_in: number | null; tokens_out: number | null }, partial = false): string =>
  t.tokens_in === null || t.tokens_out === null ? "-" : `${t.tokens_in}/${t.tokens_out}${partial ? "+" : ""}`;

/** A session's totals over its phases: known figures summed, marked partial when a phase lacks one. */
type Totalled = Omit<SessionWithTotals, "totals"> & { totals: Totals };
const withTotals = <T extends SessionWithTotals & { phases: PhaseRow[] }>(row: T): Omit<T, "totals"> & { totals: Totals } => ({ ...row, totals: totalsOf(row.phases) });

/** The host column, when the ledger holds more than one host: the hostname, with the machine id when a hostname is shared. */
function hostColumn(hosts: HostCount[]): ((s: Totalled) => string) | null {
  if (hosts.length < 2) return null;
  const shared = new Set(hosts.map((h) => h.host).filter((name, i, all) => all.indexOf(name) !== i));
  const label = (h: { host: string | null; machine_id: string | null }) => (shared.has(h.host) ? hostLabel({ hostname: h.host, machineId: h.machine_id }) : (h.host ?? "?"));
  const width = Math.max(...hosts.map((h) => label(h).length));
  return (s) => label(s).padEnd(width);
}

/** A ledger time as the listing shows it: to the second, UTC, with its Z. */
const utc = (iso: string): string => `${iso.slice(0, 19)}Z`;

function sessionLine(s: Totalled, host: ((s: Totalled) => string) | null): string {
  const t = s.totals;
  return printable([s.id, ...(host === null ? [] : [host(s)]), s.agent.padEnd(6), (t.last_status ?? "open").padEnd(9), String(t.phase_count).padStart(3), money(t.cost_micro_usd, t.partial).padStart(10), tokens(t, t.partial).padStart(12), utc(s.declared_at), s.cwd].join("  "));
}

/** The header row, aligned with sessionLine. */
function headerLine(first: Totalled, host: ((s: Totalled) => string) | null): string {
  const hostWidth = host === null ? [] : ["HOST".padEnd(host(first).length)];
  return ["SESSION".padEnd(first.id.length), ...hostWidth, "AGENT ", "STATUS   ", "PHS", "      COST", " TOKENS I/O ", "DECLARED (UTC)      ", "FOLDER"].join("  ");
}

export const sessionsCommand = defineCommand({
  meta: { name: "sessions", description: "List the sessions in the ledger, newest first (one JSON object per line with --json)" },
  args: {
    json: { type: "boolean", description: "One JSON object per session per line, with its phases and every column: an export `agentport import` merges (all sessions unless --limit)" },
    agent: { type: "enum", options: [...AGENT_NAMES], description: "Only this agent's sessions" },
    cwd: { type: "string", description: "Only sessions born in this folder" },
    host: { type: "string", valueHint: "NAME", description: "Only sessions born on this host: its hostname, or its machine id (or the start of it)" },
    limit: { type: "string", valueHint: "N", description: "At most N sessions (default 50, all with --json; 0 for all)" },
    ...ledgerCommandArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    // An export is complete unless asked otherwise; a listing for the eye is short.
    const limit = args.limit === "0" || (args.json && args.limit === undefined) ? undefined : positiveInt("limit", args.limit, 50);
    // No ledger yet: nothing to list, and nothing is created.
    const choice = await projectLedger(args);
    await using ledger = await openExistingLedger(choice, { readonly: true });
    if (ledger === null) {
      log.info(`no sessions yet: no ledger at ${choice.shown}`);
      return 0;
    }
    const filter = { agent: args.agent as AgentName | undefined, cwd: args.cwd ? resolve(args.cwd) : undefined, host: args.host || undefined, limit };
    if (args.json) {
      for await (const record of exportSessions(ledger, filter)) await writeResult(safeJson(withTotals(record)));
      return 0;
    }
    // One more than shown, to know whether the listing cuts.
    const listed = await ledger.listSessions({ ...filter, limit: limit === undefined ? undefined : limit + 1 });
    const shown = await Promise.all((limit === undefined ? listed : listed.slice(0, limit)).map(async (row) => withTotals({ ...row, phases: await ledger.phases(row.id) })));
    const first = shown[0];
    if (first === undefined) {
      log.info(`no sessions in the ledger (${choice.shown})${filter.agent || filter.cwd || filter.host ? " that match" : ""}`);
      return 0;
    }
    const host = hostColumn(await ledger.hosts());
    await writeResult([headerLine(first, host), ...shown.map((row) => sessionLine(row, host))].join("\n"));
    if (shown.length < listed.length) {
      const all = (await ledger.listSessions({ ...filter, limit: undefined })).length;
      log.info(`… ${all - shown.length} more (use --limit)`);
    }
    return 0;
  },
});

/** A phase, and its run folder on the line below when it has one. */
function phaseLines(p: PhaseRow): string[] {
  const line = printable([`#${p.seq}`, (p.kind ?? "-").padEnd(6), (p.status ?? "running").padEnd(9), money(p.cost_micro_usd).padStart(9), tokens(p).padStart(12), p.seconds === null ? "-" : `${p.seconds.toFixed(1)}s`, p.started_at.slice(0, 19), p.observed_model ?? "-", p.failure ?? ""].join("  "));
  return p.run_dir === null ? [line] : [line, `    run folder ${p.run_dir}`];
}

export const showCommand = defineCommand({
  meta: { name: "show", description: "One session: where it was born, its phases, tokens, cost and status" },
  args: {
    id: SESSION_ID_ARG,
    json: { type: "boolean", description: "The session and its phases as one JSON object" },
    ...ledgerCommandArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    await using opened = await openNamedSession(args, args.id, { readonly: true });
    const { ledger, session: found } = opened;
    const { totals, phases, ...session } = withTotals({ ...found, totals: null as never, phases: await ledger.phases(found.id) });
    if (args.json) {
      await writeResult(safeJson({ ...session, totals, phases }));
      return 0;
    }
    const lines = [
      `session   ${session.id} (${session.agent}${session.model ? `, ${session.model}` : ""})`,
      `born in   ${session.cwd}${session.machine_id === null ? "" : ` on ${hostLabel({ hostname: session.host, machineId: session.machine_id })}`}`,
      `declared  ${session.declared_at}`,
    ];
    if (session.imported_at) lines.push(`imported  ${session.imported_at} (resume takes its request only with --accept-imported-request)`);
    if (session.request) lines.push(`request   ${session.request}`);
    if (session.session_file) lines.push(`file      ${session.session_file}`);
    if (session.parent_id) lines.push(`parent    ${session.parent_id}`);
    lines.push(`total     ${money(totals.cost_micro_usd, totals.partial)} · ${tokens(totals, totals.partial)} tokens in/out · ${totals.phase_count} phase(s)${totals.partial ? " (partial: a phase reported no cost or tokens)" : ""}`);
    lines.push(...phases.flatMap(phaseLines));
    // The ledger may hold imported strings: nothing in it drives the terminal.
    await writeResult(lines.map(printable).join("\n"));
    return 0;
  },
});
