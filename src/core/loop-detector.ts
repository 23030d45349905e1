// Loop detection over what the reducers report through `LoopObserver`. Pure,
// O(1) memory: only the last two action fingerprints, the last text digest and
// three counters are kept, however long the run.
//
// Three rules, each over its own sequence:
// - repeat: the same action fingerprint (tool name + input digest + result
//   digest) K times in a row. K = 5 by default, gemini-cli's
//   TOOL_CALL_LOOP_THRESHOLD. Since the result is in the fingerprint, a call
//   whose result changes (a build getting further, a file being edited) is
//   progress and does not count.
// - ping-pong: two fingerprints alternating A-B-A-B… for N full cycles. N is
//   ceil(K / 2) by default (3 for K = 5: six calls, each of the two repeated
//   three times with the same result), so this rule trips after about as many
//   wasted calls as the repeat rule (2N ∈ {K, K + 1}).
// - text: the same assistant text digest N times in a row among the
//   assistant's texts. N = K by default. Text-less turns are skipped (claude
//   prints one assistant record per content block, so a tool call is a
//   text-less turn), and so are actions: "Let me try again." five times with
//   failing calls in between is a loop even when the calls differ.
//
// Retries are not actions: they neither count toward nor break any streak. The
// first detection sticks; after it nothing more is tracked.
import type { LoopObserver } from "./loop.ts";
import { clean } from "./text.ts";

export type LoopKind = "repeat" | "ping-pong" | "text";

export interface LoopVerdict {
  kind: LoopKind;
  /** The tool name ("Read"), two names for a ping-pong ("Edit, Bash"), "" for text. Never an input. */
  tool: string;
  /** Calls in a row (repeat), full A-B cycles (ping-pong), texts in a row (text). */
  count: number;
  /** One line, e.g. "the same Read call 5 times in a row". */
  reason: string;
}

export interface LoopDetectorOptions {
  /** K: identical calls in a row that make a loop. Default 5 (gemini-cli). */
  repeat?: number;
  /** Full A-B cycles that make a ping-pong. Default ceil(K / 2). */
  pingPong?: number;
  /** Identical assistant texts in a row that make a loop. Default K. */
  textRepeat?: number;
  /** Called once, at the first detection. */
  onLoop?: (verdict: LoopVerdict) => void;
}

export const DEFAULT_LOOP_REPEAT = 5;
const MAX_NAME_CHARS = 64;

function threshold(name: string, value: number | undefined, fallback: number): number {
  const n = value ?? fallback;
  if (!Number.isSafeInteger(n) || n < 2) throw new RangeError(`loop detector: ${name} must be an integer ≥ 2, got ${n}`);
  return n;
}

export class LoopDetector implements LoopObserver {
  readonly repeatLimit: number;
  readonly pingPongLimit: number;
  readonly textLimit: number;
  private readonly onLoop: ((verdict: LoopVerdict) => void) | undefined;
  private found: LoopVerdict | null = null;

  // The last action, the one before it, and their tool names.
  private last: string | null = null;
  private lastTool = "";
  private prev: string | null = null;
  private prevTool = "";
  /** Length of the run of identical fingerprints ending at `last`. */
  private same = 0;
  /** Length of the strictly alternating (x ≠ y, x = the one two back) run ending at `last`. */
  private alternating = 0;

  private lastText: string | null = null;
  private sameText = 0;

  constructor(options: LoopDetectorOptions = {}) {
    this.repeatLimit = threshold("repeat", options.repeat, DEFAULT_LOOP_REPEAT);
    this.pingPongLimit = threshold("pingPong", options.pingPong, Math.max(2, Math.ceil(this.repeatLimit / 2)));
    this.textLimit = threshold("textRepeat", options.textRepeat, this.repeatLimit);
    this.onLoop = options.onLoop;
  }

  action(tool: string, fingerprint: string): void {
    if (this.found !== null) return;
    const name = clean(tool, MAX_NAME_CHARS) || "unnamed";
    if (fingerprint === this.last) {
      this.same += 1;
      this.alternating = 1;
    } else {
      this.same = 1;
      this.alternating = this.last === null ? 1 : fingerprint === this.prev ? this.alternating + 1 : 2;
    }
    this.prev = this.last;
    this.prevTool = this.lastTool;
    this.last = fingerprint;
    this.lastTool = name;

    if (this.same >= this.repeatLimit) {
      this.detect({ kind: "repeat", tool: name, count: this.same, reason: `the same ${name} call ${this.same} times in a row` });
    } else if (this.alternating >= 2 * this.pingPongLimit) {
      // The run ends on B, so `prev` is A: name them in the order they came.
      const a = this.prevTool;
      const b = name;
      const cycles = Math.floor(this.alternating / 2);
      const tools = a === b ? a : `${a}, ${b}`;
      const what = a === b ? `two ${a} calls` : `${a} and ${b} calls`;
      this.detect({ kind: "ping-pong", tool: tools, count: cycles, reason: `${what} alternating ${cycles} times (A-B ping-pong)` });
    }
  }

  retry(): void {
    // A retry is the provider's, not the model's: no streak moves.
  }

  turn(textDigest?: string): void {
    if (this.found !== null || textDigest === undefined) return;
    this.sameText = textDigest === this.lastText ? this.sameText + 1 : 1;
    this.lastText = textDigest;
    if (this.sameText >= this.textLimit) {
      this.detect({ kind: "text", tool: "", count: this.sameText, reason: `the same assistant text ${this.sameText} times in a row` });
    }
  }

  /** The first loop found, or null. */
  verdict(): LoopVerdict | null {
    return this.found;
  }

  /** How many fingerprints and digests are held (for tests: never more than 3). */
  size(): number {
    return (this.last === null ? 0 : 1) + (this.prev === null ? 0 : 1) + (this.lastText === null ? 0 : 1);
  }

  private detect(verdict: LoopVerdict): void {
    this.found = verdict;
    this.last = this.prev = this.lastText = null;
    this.onLoop?.(verdict);
  }
}
