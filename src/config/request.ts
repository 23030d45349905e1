// Settings as flag-shaped values: what `agentport config` shows, and the
// request a session is born with (stored in the ledger, given back to the
// resolver as the "session" layer on resume). Pure.
import type { FlagValue } from "./values.ts";
import { SETTING_KEYS, type SettingKey, type Settings } from "./resolve.ts";

export type ShownValue = FlagValue | null;

/** Each setting in the units its flag takes (seconds, USD), null when unset. */
export function asFlags(s: Settings): Record<SettingKey, ShownValue> {
  const secs = (ms: number | null) => (ms === null ? null : ms / 1000);
  const out: Record<SettingKey, ShownValue> = {
    agent: s.agent,
    model: s.model,
    thinking: s.thinking,
    tools: s.tools,
    "permission-mode": s.permissionMode,
    permissions: s.permissions,
    "fail-on-refusal": s.failOnRefusal,
    "max-turns": s.maxTurns,
    "max-cost": s.maxCostMicroUsd === null ? null : s.maxCostMicroUsd / 1e6,
    "append-system-prompt": s.appendSystemPrompt.length > 0 ? s.appendSystemPrompt : null,
    // 0 is how a flag says "no timeout".
    timeout: s.timeoutMs === null ? 0 : s.timeoutMs / 1000,
    stall: secs(s.stallMs),
    "tool-timeout": secs(s.toolTimeoutMs),
    "tell-deadline": s.tellDeadline,
    grace: secs(s.graceMs),
    "max-tokens": s.budget?.maxTokens ?? null,
    budget: s.budget?.mode ?? null,
    "cache-read-weight": s.budget?.cacheReadWeight ?? null,
    "budget-grace": s.budget === null ? null : s.budget.graceMs / 1000,
    loop: s.loopRepeat === null ? "off" : "on",
    "loop-repeat": s.loopRepeat,
    linger: s.lingerMs / 1000,
    profile: s.profile,
    "require-ext": s.requireExt.length > 0 ? s.requireExt : null,
    schema: s.envelope.kind === "file" ? s.envelope.path : null,
    envelope: s.envelope.kind === "default",
    nudges: s.nudges,
    gateway: s.gateway,
    direct: s.direct,
    "session-dir": s.sessionDir,
    "pi-bin": s.piBin,
    "claude-bin": s.claudeBin,
    home: s.home,
    ledger: s.ledger,
    "max-line-bytes": s.maxLineBytes,
    "keep-stream": s.keepStream ? "on" : "off",
    "keep-prompt": s.keepPrompt,
    serve: s.serve,
    "acp-command": s.acpCommand,
    "env-file": s.envFiles.length > 0 ? s.envFiles : null,
    "env-allow": s.envAllow.length > 0 ? s.envAllow : null,
    "pass-through": s.passThrough.length > 0 ? s.passThrough : null,
    "expect-change": s.expectChange,
    "expect-file": s.expectFiles.length > 0 ? s.expectFiles : null,
    isolate: s.isolate,
    network: s.network,
  };
  return out;
}

/**
 * What a session is born with and a resume reuses unless a flag overrides it:
 * the model and its route (gateway, direct), tools, thinking, the profile, the
 * envelope, the permission settings, the limits, the system-prompt additions
 * and the pass-through arguments.
 */
export const BIRTH_KEYS = [
  "model",
  "gateway",
  "direct",
  "tools",
  "thinking",
  "profile",
  "schema",
  "envelope",
  "require-ext",
  "permission-mode",
  "permissions",
  "fail-on-refusal",
  "max-turns",
  "max-cost",
  "append-system-prompt",
  "pass-through",
  "serve",
  "acp-command",
] as const satisfies readonly SettingKey[];

export type BirthRequest = Partial<Record<(typeof BIRTH_KEYS)[number], FlagValue>>;

/** The birth request of a session started with these settings: only what is set. */
export function birthRequest(s: Settings): BirthRequest {
  const all = asFlags(s);
  const out: BirthRequest = {};
  for (const key of BIRTH_KEYS) {
    const value = all[key];
    if (value !== null) out[key] = value;
  }
  return out;
}

export { SETTING_KEYS };
