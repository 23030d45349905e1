// Every command's help, rendered here (not by citty): usage, the description,
// arguments, options in groups, examples and exit codes, aligned, and wrapped
// to the width asked (the terminal's, else 80). A flag's long aliases are
// hidden (kept for old scripts); one-letter ones are shown.
import type { ArgDef, CommandDef } from "citty";
import { HELP_TEXT, exitCodesOf } from "./help-text.ts";
import { indented, wrapCommand, wrapWords } from "./wrap.ts";
import { COMMANDS } from "./command-table.ts";
import { columnsOf } from "./fd-out.ts";
import { VERSION } from "../version.ts";

type Args = Record<string, ArgDef>;

/** The option groups, in the order shown; a flag in none of them is the command's own (shown first). */
const GROUPS: [string, readonly string[]][] = [
  [
    "The request",
    [
      "agent",
      "as",
      "config",
      "model",
      "tools",
      "thinking",
      "permission-mode",
      "permissions",
      "fail-on-refusal",
      "append-system-prompt",
      "schema",
      "envelope",
      "nudges",
      "serve",
      "cwd",
    ],
  ],
  [
    "Limits and supervision",
    [
      "timeout",
      "stall",
      "max-turns",
      "max-cost",
      "max-tokens",
      "budget",
      "cache-read-weight",
      "budget-grace",
      "loop-repeat",
      "loop",
      "linger",
    ],
  ],
  ["pi", ["gateway", "direct", "require-ext", "session-dir"]],
  ["Environment", ["env-file", "env-allow", "profile"]],
  ["Agent binaries", ["claude-bin", "pi-bin", "codex-bin", "gemini-bin", "opencode-bin"]],
  ["Output", ["json", "progress", "max-line-bytes", "keep-stream", "keep-prompt", "verbose", "quiet"]],
  ["Ledger and state", ["home", "ledger"]],
];

/** A command's own flags keep their place in the first group for these (sessions --agent filters, run --agent picks). */
const OWN_FIRST = new Set(["sessions", "doctor", "bon", "replay"]);

/** A citty value that may be given as a function (lazily), resolved. */
export const resolved = async <T>(value: T | (() => T | Promise<T>) | undefined): Promise<T | undefined> =>
  typeof value === "function" ? await (value as () => T | Promise<T>)() : value;

/** A positional argument as usage shows it: the prompt's words as PROMPT…. */
const shownName = (name: string): string => (name === "words" ? "PROMPT…" : name.toUpperCase());

/** The value of a flag declared without a hint, as help names it. */
const HINTS: Record<string, string> = { cwd: "DIR", home: "DIR", "session-dir": "DIR", model: "ID", gateway: "PREFIX" };

/** How a flag is written: `-q, --quiet`, `--timeout S`, `--agent claude|pi`. */
function flagLabel(name: string, def: ArgDef): string {
  const alias = "alias" in def ? def.alias : undefined;
  const short = (Array.isArray(alias) ? alias : alias ? [alias] : []).filter((a) => a.length === 1).map((a) => `-${a}, `);
  const hint = "valueHint" in def && def.valueHint ? def.valueHint : (HINTS[name] ?? (name.endsWith("-bin") ? "PATH" : name.toUpperCase()));
  const value = def.type === "boolean" ? "" : def.type === "enum" ? ` ${(def.options ?? []).join("|")}` : ` ${hint}`;
  return `${short.join("")}--${name}${value}`;
}

/** Where the descriptions of these rows start: after the widest name, but never past 30 nor 40% of the width. */
const columnFor = (names: string[], indent: number, width: number): number =>
  Math.min(Math.max(...names.map((n) => n.length)) + indent + 2, Math.min(30, Math.floor(width * 0.4)));

/** Name-and-description rows, the descriptions in one column (a name too long for it stands on its own line). */
function rows(
  entries: [string, string][],
  indent: number,
  width: number,
  column = columnFor(
    entries.map(([n]) => n),
    indent,
    width,
  ),
): string[] {
  const out: string[] = [];
  for (const [name, description] of entries) {
    const text = wrapWords(description, Math.max(20, width - column));
    const head = `${" ".repeat(indent)}${name}`;
    if (head.length + 2 <= column) {
      out.push(`${head.padEnd(column)}${text[0] ?? ""}`.trimEnd());
      out.push(...text.slice(1).map((l) => `${" ".repeat(column)}${l}`));
    } else {
      out.push(head);
      out.push(...text.map((l) => `${" ".repeat(column)}${l}`));
    }
  }
  return out;
}

/** The help of `cmd` (named `name`; "agentport" for the whole program), in `width` columns. */
export async function renderHelp(cmd: CommandDef, name: string, width: number): Promise<string> {
  const meta = (await resolved(cmd.meta)) ?? {};
  const args = ((await resolved(cmd.args)) ?? {}) as Args;
  const subs = (await resolved(cmd.subCommands)) ?? {};
  const positional = Object.entries(args).filter(([, d]) => d.type === "positional");
  const flags = Object.entries(args).filter(([, d]) => d.type !== "positional");
  const program = name === "agentport" ? "agentport" : `agentport ${name}`;
  const words = positional.map(([n, d]) => (d.required === false ? `[${shownName(n)}]` : shownName(n)));
  const usage =
    name === "agentport"
      ? "agentport COMMAND [OPTIONS]"
      : [program, ...(flags.length > 0 ? ["[OPTIONS]"] : []), ...words, ...(HELP_TEXT[name]?.passThrough ? ["[-- AGENT-ARGS…]"] : [])].join(
          " ",
        );
  const out: string[] = ["USAGE", ...wrapCommand(usage, 2, width), "", ...indented(meta.description ?? "", 2, width)];

  if (Object.keys(subs).length > 0) {
    const entries: [string, string][] = [];
    for (const [sub, def] of Object.entries(subs))
      entries.push([sub, (await resolved((await resolved(def as CommandDef))?.meta))?.description?.split(/[:;(]/)[0]?.trim() ?? ""]);
    out.push(
      "",
      "COMMANDS",
      ...rows(entries, 2, width),
      "",
      ...indented(
        `agentport help COMMAND (or agentport COMMAND --help) for one command; agentport completion bash|zsh|fish for shell completion.`,
        2,
        width,
      ),
    );
  }
  if (positional.length > 0)
    out.push(
      "",
      "ARGUMENTS",
      ...rows(
        positional.map(([n, d]) => [shownName(n), d.description ?? ""]),
        2,
        width,
      ),
    );
  if (flags.length > 0) {
    out.push("", "OPTIONS");
    const placed = new Set<string>();
    const sections: [string, [string, ArgDef][]][] = [];
    for (const [title, names] of GROUPS) {
      const inGroup = flags.filter(([n]) => names.includes(n) && !(OWN_FIRST.has(name) && n === "agent"));
      for (const [n] of inGroup) placed.add(n);
      sections.push([title, inGroup]);
    }
    const own = flags.filter(([n]) => !placed.has(n));
    const all = ([["", own], ...sections] as [string, [string, ArgDef][]][]).filter(([, list]) => list.length > 0);
    const grouped = all.length > 1;
    const indent = grouped ? 4 : 2;
    // One description column for every group.
    const column = columnFor(
      all.flatMap(([, list]) => list.map(([n, d]) => flagLabel(n, d))),
      indent,
      width,
    );
    for (const [title, list] of all) {
      if (grouped) out.push(`  ${title || `Of ${name}`}`);
      out.push(
        ...rows(
          list.map(([n, d]) => [flagLabel(n, d), d.description ?? ""]),
          indent,
          width,
          column,
        ),
      );
    }
  }
  const text = HELP_TEXT[name];
  if (text !== undefined && text.examples.length > 0) out.push("", "EXAMPLES", ...text.examples.flatMap((e) => wrapCommand(e, 2, width)));
  out.push(
    "",
    "EXIT CODES",
    ...rows(
      exitCodesOf(name).map(([code, meaning]) => [String(code), meaning]),
      2,
      width,
    ),
  );
  return out.join("\n");
}

/** The whole program, as a command whose subcommands are the commands. */
export const PROGRAM: CommandDef = {
  meta: {
    name: "agentport",
    version: VERSION,
    description: `The door between an automation and headless coding agents (agentport ${VERSION})`,
  },
  subCommands: COMMANDS,
};

/** $COLUMNS, else the terminal's width, else 80. */
export const helpWidth = (): number => Math.max(40, columnsOf(1) ?? 80);

/** The help of a command by name, or of the program. */
export async function helpOf(name: string | undefined): Promise<string> {
  const load = name === undefined ? undefined : COMMANDS[name];
  return load === undefined ? renderHelp(PROGRAM, "agentport", helpWidth()) : renderHelp(await load(), name as string, helpWidth());
}
