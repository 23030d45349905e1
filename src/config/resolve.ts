// The settings of a run, resolved once: flag > the request the session was
// born with (resume) > environment > the named agent in agentport.json >
// agentport's default. One pure function: it reads nothing, and returns
// either typed settings with the source of each, or every issue found (each
// one line naming the flag, variable or field and what was wrong).
import { DEFAULT_BUDGET_GRACE_MS, DEFAULT_BUDGET_MODE, DEFAULT_CACHE_READ_WEIGHT, BUDGET_MODES } from "../core/budget.ts";
import { DEFAULT_MAX_LINE_BYTES } from "../core/frame.ts";
import { DEFAULT_LOOP_REPEAT } from "../core/loop-detector.ts";
import { knownTools, PERMISSION_MODES, THINKING_LEVELS, unknownTools, type PermissionMode, type ThinkingLevel } from "../core/translate.ts";
import { MAX_NUDGES } from "./schema.ts";
import * as v from "./values.ts";
import { AGENT_NAMES, AGENT_TRAITS } from "../core/agents.ts";
import type { FlagRecord, FlagValue, Read } from "./values.ts";
import { envLayer, fileLayer, given, settingLabel, type NamedInput } from "./layers.ts";
import {
  DEFAULT_AGENT,
  DEFAULT_GATEWAY,
  DEFAULT_LINGER_S,
  DEFAULT_NUDGES,
  DEFAULT_TIMEOUT_S,
  MAX_MAX_LINE_BYTES,
  NETWORKS,
  type AgentKind,
  type EnvelopeChoice,
  type Network,
  type Settings,
  type SettingKey,
  type Source,
  type Sources,
} from "./run-settings.ts";

export type { FlagRecord, FlagValue } from "./values.ts";
export * from "./run-settings.ts";
export { settingLabel } from "./layers.ts";

export type Resolved = { ok: true; settings: Settings; sources: Sources } | { ok: false; issues: string[] };

export interface SettingsInput {
  flags: FlagRecord;
  /** Everything after `--` on the command line. */
  passThrough?: readonly string[];
  /** The request a resumed session was born with, flag-shaped (see birthRequest). */
  session?: FlagRecord | null;
  env?: Readonly<Record<string, string | undefined>>;
  named?: NamedInput | null;
  /** The config's own `ledger` (absolute), a file-level setting whichever agent runs. */
  configLedger?: string;
  /** The agent is fixed (a resume): a named agent of the other kind is an issue. */
  agent?: AgentKind;
}

export function resolveSettings(input: SettingsInput): Resolved {
  const issues: string[] = [];
  const sources = {} as Sources;
  const layers: [Source, FlagRecord][] = [
    ["flag", input.flags],
    ["session", input.session ?? {}],
    ["environment", envLayer(input.env ?? {})],
  ];
  const file = { ...fileLayer(input.named), ledger: input.configLedger };

  /** The first layer that sets `key`, parsed; else the named agent's value; else the default. */
  function pick<T>(key: SettingKey, parse: (label: string, raw: FlagValue) => Read<T>, fallback: T): T {
    for (const [source, record] of layers) {
      const raw = record[key];
      if (!given(key, raw)) continue;
      sources[key] = source;
      const read = parse(settingLabel(source, key), raw);
      if (read.ok) return read.value;
      issues.push(read.issue);
      return fallback;
    }
    const fromFile = file[key];
    if (fromFile !== undefined) {
      sources[key] = "file";
      return fromFile as T;
    }
    sources[key] = "default";
    return fallback;
  }

  const named = input.named ?? null;
  let agent = pick<AgentKind>("agent", v.oneOf(AGENT_NAMES), DEFAULT_AGENT);
  if (input.agent !== undefined) {
    if (named !== null && named.agent.agent !== input.agent)
      issues.push(`--as ${named.name}: it is a ${named.agent.agent} agent, and this session is ${input.agent}'s`);
    agent = input.agent;
    sources.agent = "session";
  }

  const envelopeFlag = layers.find(([, r]) => given("schema", r.schema) || (r.envelope !== undefined && r.envelope !== ""));
  let envelope: EnvelopeChoice = (file.envelope as EnvelopeChoice | undefined) ?? { kind: "none" };
  let envelopeSource: Source = file.envelope !== undefined ? "file" : "default";
  if (envelopeFlag !== undefined) {
    const [source, r] = envelopeFlag;
    envelopeSource = source;
    if (given("schema", r.schema)) envelope = { kind: "file", path: String(r.schema), label: settingLabel(source, "schema") };
    else {
      const on = v.boolean(settingLabel(source, "envelope"), r.envelope as FlagValue);
      if (!on.ok) issues.push(on.issue);
      envelope = on.ok && on.value ? { kind: "default" } : { kind: "none" };
    }
  }
  sources.schema = sources.envelope = envelopeSource;

  const maxTokens = pick<number | null>("max-tokens", v.positiveInt, null);
  const budgetMode = pick("budget", v.oneOf(BUDGET_MODES), DEFAULT_BUDGET_MODE);
  const cacheReadWeight = pick("cache-read-weight", v.decimal(0, 1, "a number from 0 to 1"), DEFAULT_CACHE_READ_WEIGHT);
  const graceMs = pick("budget-grace", v.graceSeconds, DEFAULT_BUDGET_GRACE_MS);
  if (maxTokens === null) {
    const stray = (["budget", "cache-read-weight", "budget-grace"] as const).find((k) => sources[k] === "flag");
    if (stray !== undefined) issues.push(`--${stray} needs --max-tokens`);
  }

  const loopOn = pick("loop", v.oneOf(["on", "off"] as const), "on");
  const loopRepeat = pick("loop-repeat", v.wholeNumber(2, 1000), DEFAULT_LOOP_REPEAT);
  const passThroughFlag = input.passThrough !== undefined && input.passThrough.length > 0;
  const passThrough = passThroughFlag ? [...(input.passThrough ?? [])] : pick<string[]>("pass-through", v.texts, []);
  if (passThroughFlag) sources["pass-through"] = "flag";

  const settings: Settings = {
    name: named?.name ?? null,
    agent,
    model: pick<string | null>("model", v.string, null),
    thinking: pick<ThinkingLevel | null>("thinking", v.oneOf(THINKING_LEVELS), null),
    tools: pick<string[] | null>("tools", v.list, null),
    permissionMode: pick<PermissionMode | null>("permission-mode", v.oneOf(PERMISSION_MODES), null),
    permissions: pick<string | null>("permissions", v.string, null),
    failOnRefusal: pick("fail-on-refusal", v.boolean, false),
    maxTurns: pick<number | null>("max-turns", v.positiveInt, null),
    maxCostMicroUsd: pick<number | null>("max-cost", v.usd, null),
    appendSystemPrompt: pick<string[]>("append-system-prompt", v.texts, []),
    timeoutMs: pick<number | null>("timeout", v.seconds(true), DEFAULT_TIMEOUT_S * 1000),
    stallMs: pick<number | null>("stall", v.seconds(false), null),
    toolTimeoutMs: pick<number | null>("tool-timeout", v.seconds(false), null),
    tellDeadline: pick("tell-deadline", v.boolean, false),
    graceMs: pick<number | null>("grace", v.seconds(false), null),
    budget: maxTokens === null ? null : { maxTokens, mode: budgetMode, cacheReadWeight, graceMs },
    loopRepeat: loopOn === "off" ? null : loopRepeat,
    lingerMs: pick<number | null>("linger", v.seconds(false), DEFAULT_LINGER_S * 1000) ?? DEFAULT_LINGER_S * 1000,
    profile: pick<string[] | null>("profile", v.list, null),
    requireExt: pick<string[]>("require-ext", v.list, []),
    envelope,
    nudges: pick("nudges", v.wholeNumber(0, MAX_NUDGES), DEFAULT_NUDGES),
    gateway: pick("gateway", v.string, DEFAULT_GATEWAY),
    direct: pick("direct", v.boolean, false),
    sessionDir: pick<string | null>("session-dir", v.string, null),
    piBin: pick<string | null>("pi-bin", v.string, null),
    claudeBin: pick<string | null>("claude-bin", v.string, null),
    home: pick<string | null>("home", v.string, null),
    ledger: pick<string | null>("ledger", v.string, null),
    maxLineBytes: pick("max-line-bytes", v.lineBound(MAX_MAX_LINE_BYTES), DEFAULT_MAX_LINE_BYTES),
    keepStream: pick("keep-stream", v.onOff, true),
    keepPrompt: pick("keep-prompt", v.boolean, false),
    serve: pick("serve", v.boolean, false),
    acpCommand: pick<string[] | null>("acp-command", v.command, null),
    envFiles: pick<string[]>("env-file", v.texts, []),
    envAllow: pick<string[]>("env-allow", v.texts, []),
    passThrough,
    expectChange: pick("expect-change", v.boolean, false),
    expectFiles: pick<string[]>("expect-file", v.texts, []),
    isolate: pick<boolean | null>("isolate", v.boolean, null),
    network: pick<Network>("network", v.oneOf(NETWORKS), "host"),
  };
  // Isolated, the sandbox is the boundary: a headless permission prompt only makes a run that "succeeds" having done nothing.
  if (settings.permissions !== null && settings.permissionMode !== null) {
    issues.push(
      `${settingLabel(sources.permissions, "permissions")} and ${settingLabel(sources["permission-mode"], "permission-mode")}: choose one (the policy file answers every permission request)`,
    );
  }
  if (
    settings.isolate === true &&
    settings.permissionMode === null &&
    settings.permissions === null &&
    AGENT_TRAITS[settings.agent].permissionModes
  )
    settings.permissionMode = "bypassPermissions";
  if (settings.isolate !== true && settings.network === "none")
    issues.push(`${settingLabel(sources.network, "network")} none: only with --isolate (without it the agent has the host's network)`);
  if (settings.tellDeadline && settings.timeoutMs === null)
    issues.push(
      `${settingLabel(sources["tell-deadline"], "tell-deadline")}: there is no deadline to tell (the timeout is 0); give --timeout S`,
    );
  issues.push(...graceIssues(settings, settingLabel(sources.grace, "grace")));
  issues.push(...agentIssues(settings, sources));
  return issues.length > 0 ? { ok: false, issues } : { ok: true, settings, sources };
}

/** A grace comes before a timeout, and is shorter than it. */
function graceIssues(s: Settings, label: string): string[] {
  if (s.graceMs === null) return [];
  if (s.timeoutMs === null) return [`${label}: there is no timeout to wrap up before (the timeout is 0); give --timeout S`];
  if (s.graceMs >= s.timeoutMs) return [`${label} ${s.graceMs / 1000}: must be shorter than the timeout (${s.timeoutMs / 1000} s)`];
  return [];
}

/** Tool names the agent does not know (where its row names a vocabulary), and the command an agent without a binary of its own needs and only it takes; what an agent cannot take at all is its adapter's to refuse (agents/settings.ts). */
function agentIssues(s: Settings, sources: Sources): string[] {
  const { toolWords, namedBinary } = AGENT_TRAITS[s.agent];
  const unknown = toolWords === null ? [] : unknownTools(toolWords, s.tools ?? []);
  const issues: string[] = [];
  if (!namedBinary && s.acpCommand === null)
    issues.push(`--agent ${s.agent} needs the ACP agent's command: --acp-command 'gemini --acp' (or acp_command in agentport.json)`);
  if (namedBinary && s.acpCommand !== null)
    issues.push(
      `${settingLabel(sources["acp-command"], "acp-command")}: only the acp agent takes an ACP command (this run's agent is ${s.agent})`,
    );
  if (toolWords === null || unknown.length === 0) return issues;
  const names = unknown.map((t) => `"${t}"`).join(", ");
  return [
    ...issues,
    `${settingLabel(sources.tools, "tools")}: unknown tool${unknown.length > 1 ? "s" : ""} ${names} for ${s.agent} (known: ${knownTools(toolWords).join(", ")})`,
  ];
}
