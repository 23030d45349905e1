// Options shared by the commands, and their checks.
import { DEFAULT_MAX_LINE_BYTES } from "../core/frame.ts";
import { PROGRESS_MODES } from "./progress-view.ts";
import { usageError } from "./errors.ts";

export const verbosityArgs = {
  verbose: { type: "boolean" as const, description: "Say more on stderr" },
  quiet: { type: "boolean" as const, alias: "q", description: "Say only errors on stderr (and no progress)" },
};

export const outputArgs = {
  json: { type: "boolean" as const, description: "Print one JSON verdict on stdout instead of the final text" },
  progress: {
    type: "enum" as const,
    options: [...PROGRESS_MODES] as string[],
    description: "Live progress on stderr: auto (a status line on a terminal, lines otherwise), lines, json (NDJSON), off",
  },
  "max-line-bytes": {
    type: "string" as const,
    valueHint: "N",
    description: `Skip (and count) stdout lines longer than N bytes (default ${DEFAULT_MAX_LINE_BYTES})`,
  },
};

/** A positive integer option, or a usage error naming it. */
export function positiveInt(name: string, value: unknown, fallback: number): number;
export function positiveInt(name: string, value: unknown, fallback?: undefined): number | undefined;
export function positiveInt(name: string, value: unknown, fallback?: number): number | undefined {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw usageError(`--${name} must be a positive integer, got "${value}"`);
  return n;
}

/** A positive number of seconds as milliseconds, or a usage error naming it. */
export function seconds(name: string, value: unknown): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw usageError(`--${name} must be a positive number of seconds, got "${value}"`);
  return Math.round(n * 1000);
}

export function list(value: unknown): string[] | undefined {
  if (typeof value !== "string" || value.trim() === "") return undefined;
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A flag given several times (`--gate`, `--env-file`): citty keeps only the last, so read them from the command line. */
export function repeated(rawArgs: string[], flag: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i] ?? "";
    if (arg === "--") break;
    if (arg === `--${flag}`) {
      const value = rawArgs[i + 1];
      if (value !== undefined) out.push(value);
      i++;
    } else if (arg.startsWith(`--${flag}=`)) out.push(arg.slice(flag.length + 3));
  }
  return out.filter((g) => g.trim() !== "");
}

/** The parsed flags with every `--env-file` given, in order (citty keeps only the last). */
export function withEnvFiles<T extends Record<string, unknown>>(args: T, rawArgs: string[]): T {
  return { ...args, "env-file": repeated(rawArgs, "env-file") };
}

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** "30d", "12h", "90m", "3600s": an age in milliseconds, or null when it is none of these. */
export function parseAge(text: string): number | null {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  if (match === null) return null;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}
