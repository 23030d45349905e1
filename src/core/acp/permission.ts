// The permission bridge: every `session/request_permission` gets an answer at
// once, decided as every agent's asks are (decidePermission: the --permissions
// file, else --permission-mode), as the option the agent offered for it. And
// the agent's facts from `initialize`. Pure.
import { objectOf, type Json } from "../record.ts";
import { MAX_REASON_CHARS, MAX_VALUE_CHARS, type Summary } from "../reduction.ts";
import { clean } from "../text.ts";
import { decidePermission, policyPath, type PermissionDecision, type PermissionRules, type PolicyPlace } from "../permissions.ts";
import type { Refused } from "../verdict.ts";
import type { PermissionOption, PermissionOutcome } from "./protocol.ts";
import { AcpTools } from "./tools.ts";

/** The option that says `decision` once (else always); none: the request is answered `cancelled`. */
export function permissionOutcome(decision: PermissionDecision, options: readonly PermissionOption[]): PermissionOutcome {
  const wanted = decision === "allow" ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
  for (const kind of wanted) {
    const option = options.find((o) => o.kind === kind && typeof o.optionId === "string");
    if (option !== undefined) return { outcome: { outcome: "selected", optionId: option.optionId } };
  }
  return { outcome: { outcome: "cancelled" } };
}

/** Every path a call names (its locations, its diffs), as the policy compares them: relative to the folder, null outside it. */
export function callPaths(call: Json, place: PolicyPlace): (string | null)[] {
  const named = [...(Array.isArray(call.locations) ? call.locations : []), ...(Array.isArray(call.content) ? call.content : [])]
    .map((item) => objectOf(item)?.path)
    .filter((path): path is string => typeof path === "string");
  return [...new Set(named)].slice(0, 64).map((path) => policyPath(path, place));
}

/** The answer to one permission request, what the run folder records of it, and its refused entry when rejected. */
export function answerPermission(
  rules: PermissionRules,
  call: Json,
  rawOptions: unknown,
  path: string,
): { outcome: PermissionOutcome; record: Json; refused: Refused | null } {
  const kind = AcpTools.kindOf(call.kind);
  const options = (Array.isArray(rawOptions) ? rawOptions : [])
    .map(objectOf)
    .filter((o): o is Json => o !== null) as unknown as PermissionOption[];
  const request = { kind, paths: callPaths(call, rules), title: typeof call.title === "string" ? call.title : "" };
  const { decision, rule, how } = decidePermission(rules, request);
  const outcome = permissionOutcome(decision, options);
  const record: Json = {
    method: "session/request_permission",
    kind,
    path,
    decision,
    outcome: outcome.outcome,
    ...(rule === undefined ? {} : { rule }),
  };
  const refused: Refused | null =
    decision === "allow"
      ? null
      : { kind: "permission", subject: clean(`${kind}${path ? ` ${path}` : ""}: rejected; ${how}`, MAX_REASON_CHARS) };
  return { outcome, record, refused };
}

/** What `initialize` says of the agent, for the phase's summary: name, version, protocol, capabilities. */
export function agentFacts(result: Json): Summary {
  const info = objectOf(result.agentInfo) ?? {};
  const caps = objectOf(result.agentCapabilities) ?? {};
  const prompt = Object.entries(objectOf(caps.promptCapabilities) ?? {})
    .filter(([, v]) => v === true)
    .map(([k]) => k);
  const names = [...(caps.loadSession === true ? ["loadSession"] : []), ...prompt];
  return {
    agent_name: clean(info.name, MAX_VALUE_CHARS),
    agent_version: clean(info.version, MAX_VALUE_CHARS),
    protocol_version: typeof result.protocolVersion === "number" ? result.protocolVersion : 0,
    agent_capabilities: clean(names.join(","), MAX_VALUE_CHARS),
  };
}

/** Asks whoever drives agentport (an ACP client) about one request: its outcome, or null when it could not answer. */
export type PermissionAsker = (request: { toolCall: Json; options: unknown }) => Promise<PermissionOutcome | null>;

/** The answer agentport's own client gave, passed on to the agent as it is. */
export function clientAnswer(
  call: Json,
  rawOptions: unknown,
  outcome: PermissionOutcome,
  path: string,
): { outcome: PermissionOutcome; record: Json; refused: Refused | null } {
  const kind = AcpTools.kindOf(call.kind);
  const options = (Array.isArray(rawOptions) ? rawOptions : []).map(objectOf).filter((o): o is Json => o !== null);
  const chosen =
    outcome.outcome.outcome === "selected"
      ? options.find((o) => o.optionId === (outcome.outcome as { optionId: string }).optionId)
      : undefined;
  const decision: PermissionDecision = typeof chosen?.kind === "string" && chosen.kind.startsWith("allow") ? "allow" : "reject";
  // An option the agent never offered is no answer it can take: cancelled.
  const passed: PermissionOutcome = chosen === undefined ? { outcome: { outcome: "cancelled" } } : outcome;
  const record: Json = { method: "session/request_permission", kind, path, decision, outcome: passed.outcome, by: "client" };
  const refused: Refused | null =
    decision === "allow"
      ? null
      : { kind: "permission", subject: clean(`${kind}${path ? ` ${path}` : ""}: rejected by the ACP client`, MAX_REASON_CHARS) };
  return { outcome: passed, record, refused };
}
