// What opencode's two streams share (`run --format json` records and `serve`
// events carry the same message parts): the tool and finish words, a step's
// tokens as agentport counts them, a tool's one progress detail. Pure.
import { actionFingerprint, type LoopObserver } from "../loop.ts";
import { addCapped, count } from "../numbers.ts";
import { MAX_DETAIL_CHARS } from "../progress.ts";
import type { Json } from "../record.ts";
import { relativePath } from "../text.ts";
import type { Tokens } from "../verdict.ts";

/** The loop observer's name for a step whose stream was cut before its finish reason. */
export const CUT_STEP = "step (stream cut)";
/** Finish reasons after which opencode asks the model again: not the run's end. */
export const NOT_FINAL: ReadonlySet<string> = new Set(["tool-calls", "unknown"]);
/** opencode's fixed tool error for a rejected permission (`run` rejects every ask; serve quotes the reply's message after it). */
export const REJECTED = "The user rejected permission";
/** The tool opencode substitutes for a call to one it does not offer. */
export const INVALID_TOOL = "invalid";
const PATH_TOOLS = new Set(["read", "write", "edit", "list", "glob"]);
export const ZERO_TOKENS: Tokens = { input: 0, output: 0, cache_read: 0, cache_write: 0 };

export const objectOf = (value: unknown): Json =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {};

/** opencode's `tokens` of a step or a message, added to `sum` (its input is already net of the cache; reasoning is billed as output); null when it carries none. */
export function addOpencodeTokens(sum: Tokens | null, value: unknown): { tokens: Tokens; reasoning: number } | null {
  if (value === null || typeof value !== "object") return null;
  const t = value as Json;
  const input = count(t.input);
  const output = count(t.output);
  if (input === undefined || output === undefined) return null;
  const cache = objectOf(t.cache);
  const reasoning = count(t.reasoning) ?? 0;
  const base = sum ?? ZERO_TOKENS;
  return {
    reasoning,
    tokens: {
      input: addCapped(base.input, input),
      output: addCapped(base.output, addCapped(output, reasoning)),
      cache_read: addCapped(base.cache_read, count(cache.read) ?? 0),
      cache_write: addCapped(base.cache_write, count(cache.write) ?? 0),
    },
  };
}

/** A tool's progress detail: the relative path of a file tool, else nothing. */
export function toolDetail(tool: string, input: Json, cwd: string): string {
  return PATH_TOOLS.has(tool) ? relativePath(input.filePath ?? input.path, cwd, MAX_DETAIL_CHARS) : "";
}

/** Steps whose stream was cut before its finish reason (`unknown`): in a row (a tool call breaks the streak) and in all; each one is the same action to the loop observer. */
export class CutSteps {
  inARow = 0;
  total = 0;

  constructor(private readonly loop: LoopObserver | undefined) {}

  finish(reason: string): void {
    if (reason !== "unknown") {
      this.inARow = 0;
      return;
    }
    this.inARow += 1;
    this.total += 1;
    this.loop?.action(CUT_STEP, actionFingerprint(CUT_STEP, "", ""));
  }

  /** A tool call is progress: the streak starts again. */
  progress(): void {
    this.inARow = 0;
  }

  /** The failure's words for a run that ended on a cut step. */
  describe(): string {
    return `the model's stream was cut before its finish reason (${this.inARow} step${this.inARow === 1 ? "" : "s"} in a row)`;
  }
}
