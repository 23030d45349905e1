// The agents a batch runs, and where its arms start. Pure.
import type { AgentName } from "../core/agents.ts";

/** The agents a batch runs (acp runs any command: not one of them). */
export const BON_AGENTS = ["pi", "claude", "codex", "gemini", "opencode"] as const satisfies readonly AgentName[];
export type BonAgentName = (typeof BON_AGENTS)[number];

export const isBonAgent = (value: string): value is BonAgentName => (BON_AGENTS as readonly string[]).includes(value);

/** Where each arm starts: a clone of the prime's session, a fork of it, or the spec (no prime: each arm reads the spec itself). */
export type ArmsFrom = "clone" | "fork" | "spec";
