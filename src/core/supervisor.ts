// The supervisor of one run: the timeout (on the monotonic and the wall
// clock), the stall timer, the token budget and the loop detector, behind one
// `check`. Pure: the driver passes the times in and acts on the answer.
import { BudgetGuard, type BudgetOptions } from "./budget.ts";
import { LoopDetector, type LoopVerdict } from "./loop-detector.ts";
import type { LoopObserver } from "./loop.ts";
import type { Summary } from "./reduction.ts";
import type { Tokens } from "./verdict.ts";
import type { StopCause } from "./failure.ts";
import type { Expectations } from "./evidence.ts";
import { evidence, matchRow } from "./faults.ts";
import { WRAP_UP, type WrapUpReason } from "./deadline.ts";

/** What the supervisor stops a run for: every stop cause but an interrupt (that is the user's). */
export type StopKind = Exclude<StopCause, "interrupt">;

export interface Stop {
  kind: StopKind;
  /** One line for the verdict's failure. */
  reason: string;
}

export interface SupervisorOptions {
  timeoutMs?: number;
  stallMs?: number;
  budget?: BudgetOptions | null;
  /** null turns loop detection off. */
  loopRepeat?: number | null;
  /** Ends the run after this many assistant turns (pi: agentport enforces --max-turns). */
  maxTurns?: number;
  /** Stops the run once its running cost passes this (--max-cost). */
  maxCostMicroUsd?: number;
  /** Stops a run whose one tool call stays open this long (--tool-timeout), busy or not. */
  toolTimeoutMs?: number;
  /**
   * --grace: the wrap-up is told this long before the timeout, and when an enforced
   * token budget first goes over (its --budget-grace is then the agent's time to finish).
   */
  graceMs?: number;
  /** What a completed run must leave behind (--expect-change, --expect-file): judged after the run, in phase.ts. */
  expect?: Expectations;
}

/** What a stall was: a silent wait on the model (no tool call open), or a tool call that sat idle or ran past --tool-timeout. */
export type StallKind = "api" | "tool";

/** A reducer's assistant turns so far, and whether the last one asked to go on (a tool call). */
export interface LiveTurns {
  count: number;
  continuing: boolean;
}

export interface Clock {
  /** performance.now()-like: never jumps, stops while the machine sleeps. */
  mono: number;
  /** Date.now()-like: keeps running while the machine sleeps. */
  wall: number;
}

export class Supervisor {
  readonly loop: LoopObserver | undefined;
  private readonly detector: LoopDetector | undefined;
  private readonly budget: BudgetGuard | null;
  private readonly options: SupervisorOptions;
  private started: Clock | null = null;
  private lastActivity = 0;
  private stopped: Stop | null = null;
  private timeoutClock: "monotonic" | "wall" | "both" | null = null;
  private warned: string | null = null;
  private turns: LiveTurns = { count: 0, continuing: false };
  private costMicroUsd: number | null = null;
  /** When the tool call now open was first seen open (monotonic), else null. */
  private toolOpenSince: number | null = null;
  private stallKind: StallKind | null = null;
  /** Why the run must park (a quota wall the agent retries), else null. */
  private wall: string | null = null;
  /** Why the cost stopped arriving while tokens did, else null. */
  private costSilent: string | null = null;
  /** Why the wrap-up is due (--grace), else null; `told` once the driver took it, `lost` when the agent refused it. */
  private wrapUp: { reason: WrapUpReason; told: boolean; lost?: true } | null = null;

  constructor(options: SupervisorOptions) {
    this.options = options;
    this.budget = options.budget ? new BudgetGuard(options.budget) : null;
    if (options.loopRepeat !== null) {
      this.detector = new LoopDetector({ repeat: options.loopRepeat });
      this.loop = this.detector;
    }
  }

  /** Each phase's time limit, if any (--timeout). */
  get timeoutMs(): number | undefined {
    return this.options.timeoutMs;
  }

  /** What the run must leave behind, if anything. */
  get expect(): Expectations | undefined {
    return this.options.expect;
  }

  start(now: Clock): void {
    this.started = now;
    this.lastActivity = now.mono;
  }

  /** The agent printed something. */
  activity(now: Clock): void {
    this.lastActivity = now.mono;
  }

  /**
   * Whether a tool call is open, and whether the agent's processes did work
   * since the last look (CPU time, or output): a busy open tool call is no
   * stall, however silent its stream.
   */
  tools(open: boolean, busy: boolean, now: Clock): void {
    if (!open) this.toolOpenSince = null;
    else {
      this.toolOpenSince ??= now.mono;
      if (busy) this.lastActivity = now.mono;
    }
  }

  /** The run's token totals so far; the budget guard samples them. */
  usage(tokens: Tokens | null, now: Clock): void {
    if (this.budget === null || tokens === null) return;
    const event = this.budget.sample(tokens, now.mono);
    if (event?.kind === "warn") this.warned = `token budget exceeded: ${event.weighted} weighted tokens of ${event.max}`;
  }

  /** The run's running cost and assistant turns so far (null / undefined when the reducer does not know). */
  spent(costMicroUsd: number | null, turns: LiveTurns | null, costSilent: string | null = null): void {
    if (costMicroUsd !== null) this.costMicroUsd = costMicroUsd;
    this.costSilent = costSilent;
    if (turns !== null) this.turns = turns;
  }

  /** The provider error the agent is retrying now (null: none): a quota wall is not waited out in retries. */
  retrying(error: string | null): void {
    if (this.stopped === null && error !== null && matchRow(error) === "quota_wall") {
      this.wall = `parked: the agent is retrying a usage limit that resets later (${evidence(error)}); it was stopped`;
    }
  }

  /** A warning to show once, if one arose since the last call. */
  takeWarning(): string | null {
    const warning = this.warned;
    this.warned = null;
    return warning;
  }

  /** The wrap-up message to tell the agent now (--grace), once; null when none is due. */
  takeWrapUp(): string | null {
    if (this.wrapUp === null || this.wrapUp.told || this.stopped !== null) return null;
    this.wrapUp.told = true;
    return WRAP_UP[this.wrapUp.reason];
  }

  /** The agent refused the wrap-up the driver took (pi answered its `steer` with an error): the verdict does not say it was sent. */
  wrapUpLost(): void {
    if (this.wrapUp?.told) this.wrapUp.lost = true;
  }

  /** With --grace: whether the wrap-up is due now (the timeout near, or an enforced budget over). */
  private dueWrapUp(now: Clock): void {
    const { graceMs, timeoutMs } = this.options;
    if (graceMs === undefined || this.wrapUp !== null || this.started === null) return;
    const budget = this.budget?.state();
    if (budget?.over && this.budget?.options.mode === "enforce") this.wrapUp = { reason: "budget", told: false };
    else if (timeoutMs !== undefined && Math.max(now.mono - this.started.mono, now.wall - this.started.wall) >= timeoutMs - graceMs) {
      this.wrapUp = { reason: "timeout", told: false };
    }
  }

  /** Whether the run must stop now, and why. The first stop sticks. */
  check(now: Clock): Stop | null {
    if (this.stopped !== null || this.started === null) return this.stopped;
    const { timeoutMs, stallMs } = this.options;
    if (this.wall !== null) return this.stop({ kind: "wall", reason: this.wall });
    const loop: LoopVerdict | null = this.detector?.verdict() ?? null;
    if (loop !== null) return this.stop({ kind: "loop", reason: `looping: ${loop.reason}` });
    if (this.budget !== null) {
      const event = this.budget.tick(now.mono);
      if (event?.kind === "warn") this.warned = `token budget exceeded: ${event.weighted} weighted tokens of ${event.max}`;
      if (event?.kind === "stop" || this.budget.state().stopped) {
        const s = this.budget.state();
        return this.stop({ kind: "budget", reason: `over budget: ${s.weighted} weighted tokens of ${s.max} (enforced after the grace)` });
      }
    }
    this.dueWrapUp(now);
    const { maxTurns, maxCostMicroUsd } = this.options;
    // The Nth turn may still be the last: only a turn that asks to go on past the limit is stopped.
    if (maxTurns !== undefined && (this.turns.count > maxTurns || (this.turns.count === maxTurns && this.turns.continuing))) {
      return this.stop({
        kind: "turns",
        reason: `turn limit: ${maxTurns} assistant turn${maxTurns === 1 ? "" : "s"} reached (--max-turns ${maxTurns}); the agent was stopped`,
      });
    }
    // A budget that can no longer be measured is not one to run on: never believe nothing was spent.
    if (maxCostMicroUsd !== undefined && this.costSilent !== null) {
      return this.stop({
        kind: "cost",
        reason: `over budget: --max-cost can no longer be kept: ${this.costSilent}; the agent was stopped (use --max-tokens, or set "prices" for the model)`,
      });
    }
    if (maxCostMicroUsd !== undefined && this.costMicroUsd !== null && this.costMicroUsd > maxCostMicroUsd) {
      const usd = (micro: number) => `$${micro / 1e6}`;
      return this.stop({
        kind: "cost",
        reason: `over budget: running cost ${usd(this.costMicroUsd)} passed --max-cost ${usd(maxCostMicroUsd)}; the agent was stopped`,
      });
    }
    if (timeoutMs !== undefined) {
      const mono = now.mono - this.started.mono >= timeoutMs;
      const wall = now.wall - this.started.wall >= timeoutMs;
      if (mono || wall) {
        this.timeoutClock = mono && wall ? "both" : mono ? "monotonic" : "wall";
        const slept = this.timeoutClock === "wall" ? " (on the wall clock only: the machine slept)" : "";
        return this.stop({ kind: "timeout", reason: `timed out after ${timeoutMs / 1000} s${slept}` });
      }
    }
    const { toolTimeoutMs } = this.options;
    if (toolTimeoutMs !== undefined && this.toolOpenSince !== null && now.mono - this.toolOpenSince >= toolTimeoutMs) {
      this.stallKind = "tool";
      return this.stop({ kind: "stall", reason: `stalled: one tool call open for ${toolTimeoutMs / 1000} s (--tool-timeout)` });
    }
    if (stallMs !== undefined && now.mono - this.lastActivity >= stallMs) {
      this.stallKind = this.toolOpenSince === null ? "api" : "tool";
      const what = this.stallKind === "tool" ? "a tool call open, its processes idle and" : "no tool call open and";
      return this.stop({ kind: "stall", reason: `stalled: ${what} no output from the agent for ${stallMs / 1000} s` });
    }
    return null;
  }

  /** Flat facts for the verdict's summary and the ledger. */
  facts(): Summary {
    const facts: Summary = {};
    if (this.timeoutClock !== null) facts.timeout_clock = this.timeoutClock;
    if (this.stallKind !== null) facts.stall_kind = this.stallKind;
    if (this.wrapUp?.told && !this.wrapUp.lost) {
      facts.wrap_up = this.wrapUp.reason;
      // Ended before the supervisor stopped it (the timeout, the budget, any other); an interrupt is the status's to say.
      facts.wrap_up_finished = this.stopped === null;
    }
    if (this.budget !== null) {
      const s = this.budget.state();
      facts.budget_weighted_tokens = s.weighted;
      facts.budget_max_tokens = s.max;
      facts.budget_mode = this.budget.options.mode;
    }
    if (this.options.maxTurns !== undefined) facts.assistant_turns = this.turns.count;
    if (this.options.maxCostMicroUsd !== undefined && this.costMicroUsd !== null) facts.running_cost_micro_usd = this.costMicroUsd;
    const loop = this.detector?.verdict();
    if (loop) {
      facts.loop_kind = loop.kind;
      facts.loop_tool = loop.tool;
      facts.loop_count = loop.count;
    }
    return facts;
  }

  private stop(stop: Stop): Stop {
    this.stopped = stop;
    return stop;
  }
}
