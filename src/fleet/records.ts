// The fleet's `--json` records as agentport prints them, snake_case like
// every other: a task (`submit`, `task`, `tasks`, `wait`), a task's result
// (`results`), a worker (`workers`), a queue's budget (`queue`). Each schema is
// the contract `agentport schema NAME` publishes; each builder is typed by it.
import type { z } from "zod";
import { lazySchema, type Zod } from "../core/lazy-schema.ts";
import { TokensSchema, VerdictSchema } from "../core/verdict.ts";
import type { Task } from "./db.ts";
import type { Group } from "./groups.ts";
import type { Ranking } from "./arms.ts";
import type { WorkerRow } from "./roster.ts";
import { overBudget, PERIODS, TASK_STATES, type Budget } from "./rules.ts";

const count = (z: Zod) => z.number().int().nonnegative();
const text = (z: Zod) => z.string().nullable();

/** What a worker stores when its run printed no verdict (it crashed): the run's last word. */
const NoVerdictSchema = lazySchema((z) => z.strictObject({ error: z.strictObject({ kind: z.enum(["no_verdict"]), message: z.string() }) }));

/** A finished attempt's verdict as its run printed it; null until one finished (and for an interrupted attempt). */
const storedVerdict = (z: Zod) => z.union([VerdictSchema, NoVerdictSchema]).nullable();

/** Each gate run: its exit code (null: timed out or killed) and the redacted tail of its output; null when none ran. */
const gateResults = (z: Zod) =>
  z.array(z.strictObject({ command: z.string(), exit_code: z.number().int().nullable(), tail: z.string() })).nullable();

export const TaskJsonSchema = lazySchema((z) =>
  z.strictObject({
    id: z.string(),
    key: text(z),
    state: z.enum(TASK_STATES),
    prompt: z.string(),
    /** The run flags it was submitted with, flag-shaped (never environment values). */
    request: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    repo: z.string(),
    ref: text(z),
    /** The fencing token: the number of the latest claim. */
    attempt: count(z),
    /** How many attempts started an agent. */
    runs: count(z),
    retries: count(z),
    created_at: z.string(),
    worker: text(z),
    lease_expires_at: text(z),
    agent_started: z.boolean(),
    verdict: storedVerdict(z),
    exit_code: z.number().int().nullable(),
    finished_at: text(z),
    requires: z.array(z.string()),
    cancel_requested: z.boolean(),
    resume_session: text(z),
    birth_machine: text(z),
    birth_host: text(z),
    birth_folder: text(z),
    bundle_bytes: count(z).nullable(),
    commit: text(z),
    queue: z.string(),
    patch_bytes: count(z).nullable(),
    patch_stored: z.boolean(),
    stream_bytes: count(z).nullable(),
    stream_stored: z.boolean(),
    spent_micro_usd: z.number().nonnegative().nullable(),
    /** When its latest attempt's agent started. */
    started_at: text(z),
    /** An arm of a best-of-N group (`submit --arms`): the group's id and its 1-based arm number; null otherwise. */
    group_id: text(z),
    arm: count(z).nullable(),
    /** The arm's gates, run by the worker in its workspace after the phase. */
    gates: z.array(z.string()),
    /** Each gate run: its exit code (null: timed out or killed) and the redacted tail of its output; null before any ran. */
    gate_results: gateResults(z),
    /** Why a queued task waits (its queue's budget, or no live worker can take it); null when it does not. */
    waiting: text(z),
  }),
);
export type TaskJson = z.infer<typeof TaskJsonSchema>;

/** A task as printed; `waiting` as `tasks` found it (a task that is not queued waits for nothing). */
export const taskJson = (t: Task, waiting: string | null = null): TaskJson => ({
  ...t,
  verdict: t.verdict as TaskJson["verdict"],
  waiting,
});

export const ResultJsonSchema = lazySchema((z) =>
  z.strictObject({
    id: z.string(),
    state: z.enum(TASK_STATES),
    attempt: count(z),
    runs: count(z),
    /** As `run`'s would be (130 for a cancelled task without one). */
    exit_code: z.number().int(),
    finished_at: text(z),
    commit: text(z),
    patch_bytes: count(z).nullable(),
    verdict: storedVerdict(z),
  }),
);
export type ResultJson = z.infer<typeof ResultJsonSchema>;

export const WorkerJsonSchema = lazySchema((z) =>
  z.strictObject({
    id: z.string(),
    hostname: z.string(),
    machine_id: z.string(),
    /** The folder its workspaces are in, on its host. */
    workspaces: z.string(),
    labels: z.array(z.string()),
    agents: z.array(z.string()),
    concurrency: z.number().int().positive(),
    started_at: z.string(),
    /** When its row lapses unless it beats again (the database's clock). */
    expires_at: z.string(),
    /** The tasks it runs now. */
    tasks: z.array(z.string()),
  }),
);
export type WorkerJson = z.infer<typeof WorkerJsonSchema>;

export const workerJson = ({ machineId, ...w }: WorkerRow): WorkerJson => ({
  ...w,
  labels: [...w.labels],
  agents: [...w.agents],
  machine_id: machineId,
});

export const QueueJsonSchema = lazySchema((z) =>
  z.strictObject({
    name: z.string(),
    budget_micro_usd: count(z),
    per: z.enum(PERIODS),
    /** The reported or derived cost of the tasks finished this period, and of the running ones so far. */
    spent_micro_usd: z.number().nonnegative(),
    /** The running tasks' part of it. */
    running_micro_usd: z.number().nonnegative(),
    /** Tasks finished this period that reported no cost (unknown, never $0). */
    unknown_costs: count(z),
    /** Why its tasks wait (over budget, or costs unknown); null while it is open. */
    closed: text(z),
  }),
);
export type QueueJson = z.infer<typeof QueueJsonSchema>;

export const queueJson = (b: Budget): QueueJson => ({
  name: b.name,
  budget_micro_usd: b.budgetMicroUsd,
  per: b.per,
  spent_micro_usd: b.spentMicroUsd,
  running_micro_usd: b.runningMicroUsd,
  unknown_costs: b.unknownCosts,
  closed: overBudget(b),
});

/** A best-of-N group as `submit --arms --json` prints it: its arms, each a task record. */
export const GroupJsonSchema = lazySchema((z) =>
  z.strictObject({
    id: z.string(),
    key: text(z),
    created_at: z.string(),
    /** Its arms, by arm number. */
    tasks: z.array(TaskJsonSchema),
  }),
);
export type GroupJson = z.infer<typeof GroupJsonSchema>;

export const groupJson = (g: Group): GroupJson => ({ ...g, tasks: g.tasks.map((t) => taskJson(t)) });

/** A group's ranking once every arm reported (`wait GROUP --json`, `results GROUP --json`): bon's one rule. */
export const RankingJsonSchema = lazySchema((z) =>
  z.strictObject({
    group: z.string(),
    key: text(z),
    /** Best first: green, then the cheapest, then the fastest, then the arm number. */
    arms: z.array(
      z.strictObject({
        rank: z.number().int().positive(),
        arm: z.number().int().positive(),
        task: z.string(),
        model: text(z),
        state: z.enum(TASK_STATES),
        exit_code: z.number().int().nullable(),
        green: z.boolean(),
        gates: gateResults(z),
        cost_micro_usd: z.number().nonnegative().nullable(),
        tokens: TokensSchema.nullable(),
        /** From its agent's start to its result, gates included; null when its agent never started. */
        seconds: z.number().nonnegative().nullable(),
        /** Empty when green; else the first thing that failed. */
        reason: z.string(),
      }),
    ),
    /** The first arm when it is green, else null. */
    winner: z.strictObject({ arm: z.number().int().positive(), task: z.string(), model: text(z) }).nullable(),
  }),
);
export type RankingJson = z.infer<typeof RankingJsonSchema>;

/** The ranking as printed, typed by its schema. */
export const rankingJson = (r: Ranking): RankingJson => r;
