// `agentport sessions` for a person: one row a session, fit to the width
// (80 when stdout is no terminal), the title taking what the other columns
// leave. Every cell passes printable(): ledger strings never drive the terminal.
import { printable } from "../core/text.ts";
import type { Totals } from "../core/totals.ts";

export interface ListedSession {
  /** The shortest prefix of the id that names only this session (at least 8 characters). */
  shortId: string;
  agent: string;
  model: string | null;
  title: string | null;
  declared_at: string;
  host: string | null;
  totals: Totals;
}

interface Column {
  head: string;
  cell: (s: ListedSession) => string;
  right?: boolean;
  /** Widest it gets. */
  max?: number;
}

/** How long ago, in one unit: 45s, 12m, 5h, 3d, 8w, 2y. */
export function age(iso: string, now: number): string {
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  if (s < 14 * 86_400) return `${Math.floor(s / 86_400)}d`;
  if (s < 104 * 7 * 86_400) return `${Math.floor(s / (7 * 86_400))}w`;
  return `${Math.floor(s / (365 * 86_400))}y`;
}

/** Seconds for the eye: 12s, 4m05s, 1h12m. */
export function took(seconds: number | null): string {
  if (seconds === null) return "-";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Dollars to the cent, or to 4 places under a dollar; "≥" when a phase reported no cost (the sum is a lower bound). */
function cost(t: Totals): string {
  if (t.cost_micro_usd === null) return "-";
  const usd = t.cost_micro_usd / 1e6;
  return `${t.partial ? "≥" : ""}$${usd.toFixed(usd >= 1 ? 2 : 4)}`;
}

/** `text` in at most `width` characters, cut with "…". */
function fit(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

const GAP = " ";

/** Which columns give up characters when a row is over the width, in turn, and down to what. */
const SHRINK_ORDER: [string, number][] = [
  ["FIRST PROMPT", 20],
  ["MODEL", 8],
  ["FIRST PROMPT", 12],
  ["HOST", 4],
  ["MODEL", 5],
];

/** The header and the rows, in `width` columns; a host column only when the ledger holds more than one host. */
export function sessionTable(rows: readonly ListedSession[], width: number, now: number, withHost: boolean): string[] {
  const wide = width >= 120;
  const columns: Column[] = [
    { head: "SESSION", cell: (s) => s.shortId },
    ...(withHost ? [{ head: "HOST", cell: (s: ListedSession) => s.host ?? "?", max: wide ? 32 : 16 }] : []),
    { head: "AGE", cell: (s) => age(s.declared_at, now), right: true },
    { head: "AGENT", cell: (s) => s.agent },
    { head: "MODEL", cell: (s) => s.model ?? "-", max: wide ? 32 : 16 },
    { head: "STATUS", cell: (s) => s.totals.last_status ?? "running" },
    { head: "TOOK", cell: (s) => took(s.totals.seconds), right: true },
    { head: "COST", cell: (s) => cost(s.totals), right: true },
    { head: "FIRST PROMPT", cell: (s) => s.title ?? "-" },
  ];
  const cells = rows.map((row) => columns.map((c) => printable(c.cell(row)).replace(/\s+/g, " ")));
  const widths = columns.map((c, i) => Math.min(c.max ?? Infinity, Math.max(c.head.length, ...cells.map((r) => r[i]!.length))));
  // Over the width: the title gives characters first, then the model, then the host, each down to a floor.
  let over = widths.reduce((a, b) => a + b, 0) + GAP.length * (widths.length - 1) - width;
  for (const [head, floor] of SHRINK_ORDER) {
    const i = columns.findIndex((c) => c.head === head);
    if (i === -1 || over <= 0) continue;
    const given = Math.min(over, Math.max(0, widths[i]! - floor));
    widths[i]! -= given;
    over -= given;
  }
  const last = columns.length - 1;
  const line = (values: string[]) =>
    values
      .map((v, i) => {
        const cut = fit(v, widths[i]!);
        return columns[i]!.right ? cut.padStart(widths[i]!) : i === last ? cut : cut.padEnd(widths[i]!);
      })
      .join(GAP)
      .trimEnd();
  return [line(columns.map((c) => c.head)), ...cells.map(line)];
}
