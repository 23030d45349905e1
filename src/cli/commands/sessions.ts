import { defineCommand } from "citty";
import { resolve } from "node:path";
import { AGENT_NAMES, type AgentName } from "../../core/agents.ts";
import { sessionJson, type HostCount, type Ledger, type PhaseRow, type SessionRow, type SessionWithTotals } from "../../io/ledger.ts";
import { STATUSES } from "../../core/verdict.ts";
import { usageError } from "../errors.ts";
import { columnsOf } from "../fd-out.ts";
import { sessionTable, type ListedSession } from "../session-table.ts";
import { realpathSync } from "node:fs";
import { hostLabel } from "../../io/host.ts";
import { ledgerCommandArgs, openExistingLedger } from "../ledger-option.ts";
import { projectLedger } from "../agent-options.ts";
import { parseAge, positiveInt } from "../common.ts";
import { openNamedSession, SESSION_ID_ARG } from "../session-arg.ts";
import { log, setVerbosity, writeResult } from "../output.ts";
import { printable, safeJson } from "../../core/text.ts";
import { money, totalsOf, type Totals } from "../../core/totals.ts";

const tokens = (t: { tokens_in: number | null; tokens_out: number | null }, partial = false): string =>
  t.tokens_in === null || t.tokens_out === null ? "-" : `${t.tokens_in}/${t.tokens_out}${partial ? "+" : ""}`;

/** A session's totals over its phases: known figures summed, marked partial when a phase lacks one. */
const withTotals = <T extends SessionWithTotals & { phases: PhaseRow[] }>(row: T): Omit<T, "totals"> & { totals: Totals } => ({
  ...row,
  totals: totalsOf(row.phases),
});

const real = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
};

/** The birth host as the listing shows it: the hostname, with the machine id when a hostname is shared. */
function hostLabels(hosts: HostCount[]): (s: SessionRow) => string {
  const shared = new Set(hosts.map((h) => h.host).filter((name, i, all) => all.indexOf(name) !== i));
  return (s) => (shared.has(s.host) ? hostLabel({ hostname: s.host, machineId: s.machine_id }) : (s.host ?? "?"));
}

/** The shortest prefix of the id (8 characters or more) that names this session alone in the ledger; a short id whole. */
async function shortId(ledger: Ledger, id: string): Promise<string> {
  if (id.length <= 12) return id;
  for (let length = 8; length < id.length; length += 4) {
    const found = await ledger.resolveSession(id.slice(0, length));
    if (found.kind === "found" && found.session.id === id) return id.slice(0, length);
  }
  return id;
}

/** What the listing keeps beyond the ledger's own filter (agent, folder, host): the status and the age. */
interface Kept {
  status?: string;
  since?: string;
}

const keeps =
  (kept: Kept) =>
  (s: SessionWithTotals): boolean =>
    (kept.status === undefined || (s.totals.last_status ?? "running") === kept.status) &&
    (kept.since === undefined || s.declared_at >= kept.since);

const LISTED_STATUSES = [...STATUSES, "running"];

/** --since: an age (2d, 12h, 90m, 30s) or a date (2026-11-30, or an ISO time), as the ISO time it starts at. */
function sinceOf(value: string | undefined, now: number): string | undefined {
  if (value === undefined || value === "") return undefined;
  const ago = parseAge(value);
  if (ago !== null) return new Date(now - ago).toISOString();
  const at = /^\d{4}-\d\d-\d\d([T ][\d:.]+(Z|[+-]\d\d:?\d\d)?)?$/.test(value.trim()) ? Date.parse(value.trim()) : Number.NaN;
  if (Number.isNaN(at)) throw usageError(`--since must be an age (2d, 12h, 90m) or a date (2026-11-30), got "${value}"`);
  return new Date(at).toISOString();
}

export const sessionsCommand = defineCommand({
  meta: { name: "sessions", description: "List the sessions in the ledger, newest first (one JSON object per line with --json)" },
  args: {
    json: {
      type: "boolean",
      description:
        "One JSON object per session per line, with its phases and every column: an export `agentport import` merges (all sessions unless --limit)",
    },
    agent: { type: "enum", options: [...AGENT_NAMES], description: "Only this agent's sessions" },
    status: {
      type: "string",
      valueHint: "STATUS",
      description: `Only sessions whose last phase ended so: ${LISTED_STATUSES.join(", ")} (running: not finished)`,
    },
    here: { type: "boolean", description: "Only sessions born in the current folder" },
    cwd: { type: "string", valueHint: "DIR", description: "Only sessions born in this folder" },
    host: {
      type: "string",
      valueHint: "NAME",
      description: "Only sessions born on this host: its hostname, or its machine id (or the start of it)",
    },
    since: {
      type: "string",
      valueHint: "AGE|DATE",
      description: "Only sessions born since then: an age (2d, 12h, 90m) or a date (2026-11-30)",
    },
    limit: { type: "string", valueHint: "N", description: "At most N sessions (default 50, all with --json; 0 for all)" },
    offset: { type: "string", valueHint: "N", description: "Skip the N newest matching sessions first (with --limit: paging)" },
    ...ledgerCommandArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const now = Date.now();
    // An export is complete unless asked otherwise; a listing for the eye is short.
    const limit = args.limit === "0" || (args.json && args.limit === undefined) ? undefined : positiveInt("limit", args.limit, 50);
    const offset = args.offset === undefined || args.offset === "0" ? 0 : positiveInt("offset", args.offset, 0);
    if (args.status !== undefined && !LISTED_STATUSES.includes(args.status))
      throw usageError(`--status must be one of ${LISTED_STATUSES.join(", ")}, got "${args.status}"`);
    if (args.here && args.cwd !== undefined) throw usageError("--here and --cwd both name a folder: give one");
    const kept: Kept = { status: args.status, since: sinceOf(args.since, now) };
    const inMemory = kept.status !== undefined || kept.since !== undefined;
    // No ledger yet: nothing to list, and nothing is created.
    const choice = await projectLedger(args);
    await using ledger = await openExistingLedger(choice, { readonly: true });
    if (ledger === null) {
      log.info(`no sessions yet: no ledger at ${choice.shown}`);
      return 0;
    }
    const cwd = args.here ? real(process.cwd()) : args.cwd ? resolve(args.cwd) : undefined;
    const filter = { agent: args.agent as AgentName | undefined, cwd, host: args.host || undefined };
    // The ledger cuts when it can (no status or age to look at): one more than shown, to know whether the listing cuts.
    const fetch = inMemory || limit === undefined ? undefined : offset + limit + 1;
    const matching = (await ledger.listSessions({ ...filter, limit: fetch })).filter(keeps(kept));
    const page = matching.slice(offset, limit === undefined ? undefined : offset + limit);
    if (args.json) {
      for (const row of page) await writeResult(safeJson(sessionJson(withTotals({ ...row, phases: await ledger.phases(row.id) }))));
      return 0;
    }
    if (page.length === 0) {
      const narrowed = Object.values(filter).some(Boolean) || inMemory || offset > 0;
      log.info(`no sessions in the ledger (${choice.shown})${narrowed ? " that match" : ""}`);
      return 0;
    }
    const hosts = await ledger.hosts();
    const label = hostLabels(hosts);
    const listed: ListedSession[] = await Promise.all(
      page.map(async (row) => {
        const phases = await ledger.phases(row.id);
        // The model asked for, else the one the agent said it ran.
        const model = row.model ?? phases.findLast((p) => p.observed_model !== null)?.observed_model ?? null;
        return { ...row, model, shortId: await shortId(ledger, row.id), host: label(row), totals: totalsOf(phases) };
      }),
    );
    await writeResult(sessionTable(listed, columnsOf(1) ?? 80, now, hosts.length > 1).join("\n"));
    if (matching.length > offset + page.length) {
      const all = fetch === undefined ? matching.length : (await ledger.listSessions(filter)).length;
      log.info(`… ${all - offset - page.length} more (use --limit or --offset)`);
    }
    return 0;
  },
});

/** A phase, and its run folder on the line below when it has one. */
function phaseLines(p: PhaseRow): string[] {
  const line = printable(
    [
      `#${p.seq}`,
      (p.kind ?? "-").padEnd(6),
      (p.status ?? "running").padEnd(9),
      money(p.cost_micro_usd).padStart(9),
      tokens(p).padStart(12),
      p.seconds === null ? "-" : `${p.seconds.toFixed(1)}s`,
      p.started_at.slice(0, 19),
      p.observed_model ?? "-",
      p.failure ?? "",
    ].join("  "),
  );
  const left = leftBehind(p);
  return [line, ...(left === null ? [] : [`    ${left}`]), ...(p.run_dir === null ? [] : [`    run folder ${p.run_dir}`])];
}

/** What a phase changed in its folder and the strays ended with it, when there is either. */
function leftBehind(p: PhaseRow): string | null {
  const c = p.changes;
  const parts = [
    ...(c === null ? [] : [`changed ${c.files} file${c.files === 1 ? "" : "s"} (+${c.insertions} -${c.deletions})`]),
    ...(p.reaped ? [`reaped ${p.reaped}`] : []),
  ];
  return parts.length === 0 ? null : parts.join(" · ");
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
      await writeResult(safeJson(sessionJson({ ...session, totals, phases })));
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
    lines.push(
      `total     ${money(totals.cost_micro_usd, totals.partial)} · ${tokens(totals, totals.partial)} tokens in/out · ${totals.phase_count} phase(s)${totals.partial ? " (partial: a phase reported no cost or tokens)" : ""}`,
    );
    lines.push(...phases.flatMap(phaseLines));
    // The ledger may hold imported strings: nothing in it drives the terminal.
    await writeResult(lines.map(printable).join("\n"));
    return 0;
  },
});
