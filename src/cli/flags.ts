// citty accepts any flag; a typo like --timout would be ignored silently.
// Refuse unknown flags with their name and the command's --help.
import type { CommandDef } from "citty";
import { usageError } from "./errors.ts";
import { repeated } from "./common.ts";

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export async function checkFlags(cmd: CommandDef, argv: string[], name: string): Promise<void> {
  const defs = (typeof cmd.args === "function" ? await cmd.args() : cmd.args) ?? {};
  const known = new Map<string, string>();
  for (const [key, def] of Object.entries(defs)) {
    const type = (def as { type?: string }).type ?? "string";
    if (type === "positional") continue;
    known.set(kebab(key), type);
    if (type === "boolean") known.set(`no-${kebab(key)}`, type);
    const alias = (def as { alias?: string | string[] }).alias;
    for (const a of Array.isArray(alias) ? alias : alias ? [alias] : []) known.set(a, type);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--") break;
    if (!arg.startsWith("-") || arg === "-") continue;
    const flag = arg.replace(/^--?/, "").split("=")[0] ?? "";
    const type = known.get(flag);
    if (type === undefined) throw usageError(`unknown option ${arg.split("=")[0]} for "${name}": see agentport ${name} --help`);
    if (type !== "boolean" && !arg.includes("=")) {
      if (i + 1 >= argv.length) throw usageError(`${arg} needs a value: see agentport ${name} --help`);
      i++;
    }
  }
}

/** Flags that may be repeated: every occurrence is kept, in order. */
export const REPEATABLE = ["append-system-prompt", "env-file", "env-allow", "expect-file"] as const;

export interface CommandLine {
  /** citty's values, with each repeatable flag as the list of its occurrences. */
  flags: Record<string, unknown>;
  /** The positional words before `--`. */
  words: string[];
  /** Everything after the first `--`, verbatim: the agent's own arguments. */
  passThrough: string[];
}

/** Split what citty parsed into agentport's flags, the positional words and the pass-through after `--`. */
export function commandLine(args: Record<string, unknown> & { _?: unknown }, rawArgs: readonly string[]): CommandLine {
  const dash = rawArgs.indexOf("--");
  const passThrough = dash === -1 ? [] : rawArgs.slice(dash + 1);
  const positional = Array.isArray(args._) ? (args._ as unknown[]).map(String) : [];
  // citty puts the words after `--` at the end of `_`.
  const words = positional.slice(0, positional.length - passThrough.length);
  const flags: Record<string, unknown> = { ...args };
  for (const flag of REPEATABLE) {
    const all = repeated([...rawArgs], flag);
    flags[flag] = all.length > 0 ? all : undefined;
  }
  return { flags, words, passThrough };
}
