// The project config, `agentport.json`: named agents (the roster), gates, the
// spec folder, the default agent. Validated by zod; a problem is one line that
// names the file and the field (`agents.builder.timeout: expected a number …`).
import type { z } from "zod";
import { PERMISSION_MODES, THINKING_LEVELS } from "../core/translate.ts";
import { BUDGET_MODES } from "../core/budget.ts";
import { AGENT_NAMES } from "../core/agents.ts";
import { PricesSchema } from "../core/prices.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/** Follow-up prompts asking for a missing envelope, per turn: never unbounded. */
export const MAX_NUDGES = 10;
export const DEFAULT_NUDGES = 0;

export const CONFIG_FILE = "agentport.json";

const name = lazySchema((z) => z.string().min(1));

export const BudgetSchema = lazySchema((z) =>
  z.strictObject({
    /** input + output + cache writes + W × cache reads. */
    max_tokens: z.number().int().positive(),
    mode: z.enum(BUDGET_MODES).optional(),
    cache_read_weight: z.number().min(0).max(1).optional(),
    /** Seconds over budget before enforce stops the run. */
    grace: z.number().nonnegative().optional(),
  }),
);

export const NamedAgentSchema = lazySchema((z) =>
  z.strictObject({
    /** The one word that switches an agent (pi, claude, codex, gemini). */
    agent: z.enum(AGENT_NAMES),
    description: z.string().optional(),
    /** The registry id (`provider/id`): pi adds the gateway prefix, claude drops the provider. */
    model: name.optional(),
    thinking: z.enum(THINKING_LEVELS).optional(),
    /** In pi's words (read, bash, edit, write, grep, find, ls); translated for claude. */
    tools: z.array(name).optional(),
    /** Seconds; 0 for none (default 1800). */
    timeout: z.number().nonnegative().optional(),
    /** Seconds without output. */
    stall: z.number().positive().optional(),
    /** Tell the agent its timeout in the appended system prompt (as --tell-deadline). */
    tell_deadline: z.boolean().optional(),
    /** Seconds before the timeout the agent is told to wrap up (as --grace). */
    grace: z.number().positive().optional(),
    /** Seconds one tool call may stay open (as --tool-timeout). */
    tool_timeout: z.number().positive().optional(),
    budget: BudgetSchema.optional(),
    /** Vault mode: the only env-file keys the agent gets. */
    profile: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")).optional(),
    /** pi extensions that must be proven loaded. */
    require_ext: z.array(name).optional(),
    /** A JSON Schema file (relative to the config file), or true for the default envelope. */
    schema: z.union([name, z.boolean()], { error: "expected a JSON Schema file path, or true for the default envelope" }).optional(),
    nudges: z.number().int().min(0).max(MAX_NUDGES).optional(),
    /** pi: the route prefix for the model ("" for none). */
    gateway: z.string().optional(),
    /** pi: the model already is a route. */
    direct: z.boolean().optional(),
    /** claude: its --permission-mode (pi has none: choose its tools). */
    permission_mode: z.enum(PERMISSION_MODES).optional(),
    /** A permission policy file (relative to the config file), as --permissions. */
    permissions: name.optional(),
    /** A run that completed with refused requests fails (exit 1). */
    fail_on_refusal: z.boolean().optional(),
    /** claude: --max-turns; pi: agentport ends the run after this many assistant turns. */
    max_turns: z.number().int().positive().optional(),
    /** USD: the supervisor stops the run on its running cost (claude: also --max-budget-usd). */
    max_cost: z.number().positive().optional(),
    /** Added to the agent's system prompt: text, or @FILE (relative to the config file). */
    append_system_prompt: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
    /** Keep the agent's stdout in each run folder's stream.jsonl (default true; as --keep-stream on|off). */
    keep_stream: z.boolean().optional(),
    /** opencode: run it as `opencode serve` (HTTP / SSE) instead of `opencode run` (as --serve). */
    serve: z.boolean().optional(),
    /** The run must leave a change in its folder (as --expect-change). */
    expect_change: z.boolean().optional(),
    /** Files the run must write, relative to its folder (as --expect-file). */
    expect_files: z.array(name).optional(),
    /** acp: the ACP agent's command, an argv array (as --acp-command). */
    acp_command: z.array(z.string().min(1)).min(1).optional(),
    /** Run the agent under bwrap (as --isolate): the file system read-only but its folder and its own state. */
    isolate: z.boolean().optional(),
    /** With isolate: host (default) or none (as --network). */
    network: z.enum(["host", "none"]).optional(),
  }),
);
export type NamedAgent = z.infer<typeof NamedAgentSchema>;

const Gate = lazySchema((z) => z.union([name, z.array(name).min(1)], { error: "expected a shell command, or an argv array" }));

/** `agentport bon`: how each arm's workspace is prepared. */
export const BonConfigSchema = lazySchema((z) =>
  z.strictObject({
    /** Shell commands run once in each workspace before its arm (as --setup). */
    setup: z.array(name).optional(),
    /** Ignored paths (relative to the config file) copied into each workspace (as --copy). */
    copy: z.array(name).optional(),
  }),
);

export const ConfigSchema = lazySchema((z) =>
  z
    .strictObject({
      $schema: z.string().optional(),
      /** The named agent `run` uses without --as. */
      default_agent: name.optional(),
      /** Where specs are kept (relative to the config file). */
      spec_folder: name.optional(),
      /** The ledger: sqlite:PATH or postgres://USER@HOST/DB (--ledger and $AGENTPORT_LEDGER come first). */
      ledger: z
        .string()
        .regex(/^(sqlite:|postgres(ql)?:\/\/)/, "sqlite:PATH or postgres://USER@HOST/DB")
        .optional(),
      /** Named checks: a shell command, or an argv array. */
      gates: z.record(name, Gate).optional(),
      /** Env files (relative to the config file) the agents get, as with --env-file; only from a trusted config. */
      env_file: z.union([name, z.array(name)]).optional(),
      /** Names an env file may set beyond credentials and the agent's own settings, as with --env-allow; only from a trusted config. */
      env_allow: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")).optional(),
      bon: BonConfigSchema.optional(),
      agents: z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "letters, digits, _ . -"), NamedAgentSchema).default({}),
      /** USD per million tokens by model id, for agents whose stream carries no cost (codex, gemini). */
      prices: PricesSchema.optional(),
    })
    .superRefine((config, ctx) => {
      if (config.default_agent !== undefined && !Object.hasOwn(config.agents, config.default_agent)) {
        ctx.addIssue({ code: "custom", path: ["default_agent"], message: unknownAgent(config.default_agent, Object.keys(config.agents)) });
      }
    }),
);
export type Config = z.infer<typeof ConfigSchema>;

export function unknownAgent(wanted: string, known: string[]): string {
  return `no agent named "${wanted}" (${known.length > 0 ? `known: ${known.join(", ")}` : "the file names no agents"})`;
}

/** The keys an object at this path may have, for "unknown key" messages. */
function knownKeys(path: PropertyKey[]): string[] {
  const keysOf = (schema: { shape: Record<string, unknown> }) => Object.keys(schema.shape);
  if (path.length === 0)
    return ["$schema", "default_agent", "spec_folder", "ledger", "gates", "env_file", "env_allow", "bon", "agents", "prices"];
  if (path.length === 1 && path[0] === "bon") return keysOf(BonConfigSchema);
  if (path.length === 2 && path[0] === "agents") return keysOf(NamedAgentSchema);
  if (path.length === 3 && path[0] === "agents" && path[2] === "budget") return keysOf(BudgetSchema);
  return [];
}

export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out || "(root)";
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** How a received value is named in a message: `a string ("abc")`, `an array`, … */
export function described(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
    case "number":
      return `a number (${value})`;
    case "boolean":
      return `${value}`;
    case "object":
      return "an object";
    default:
      return typeof value;
  }
}

const article = (type: string): string => (type === "array" || type === "object" ? `an ${type}` : `a ${type}`);

/** One zod issue as `field: what was wrong`. */
export function issueLine(issue: z.core.$ZodIssue, raw: unknown): string {
  const at = fieldPath(issue.path);
  const got = valueAt(raw, issue.path);
  switch (issue.code) {
    case "unrecognized_keys": {
      const keys = issue.keys.map((k) => fieldPath([...issue.path, k]));
      const known = knownKeys(issue.path);
      return `${keys.join(", ")}: unknown key${keys.length > 1 ? "s" : ""}${known.length > 0 ? ` (known: ${known.join(", ")})` : ""}`;
    }
    case "invalid_type":
      if (got === undefined) return `${at}: missing (expected ${article(issue.expected)})`;
      return `${at}: expected ${article(issue.expected)}, got ${described(got)}`;
    case "invalid_value":
      if (got === undefined) return `${at}: missing (one of ${issue.values.map(String).join(", ")})`;
      return `${at}: expected one of ${issue.values.map(String).join(", ")}, got ${described(got)}`;
    case "too_small":
    case "too_big": {
      const bound = issue.code === "too_small" ? issue.minimum : issue.maximum;
      const word = issue.code === "too_small" ? (issue.inclusive ? "at least" : "more than") : issue.inclusive ? "at most" : "less than";
      if (issue.origin === "string") return `${at}: must not be empty`;
      if (issue.origin === "array") return `${at}: must have ${word} ${String(bound)} item(s)`;
      return `${at}: must be ${word} ${String(bound)}, got ${described(got)}`;
    }
    case "invalid_format":
      return `${at}: expected ${issue.message}, got ${described(got)}`;
    case "invalid_key": {
      const key = issue.path[issue.path.length - 1];
      const why = issue.issues[0]?.message;
      return `${fieldPath(issue.path.slice(0, -1))}: ${JSON.stringify(String(key))} is not a valid name${why ? ` (${why})` : ""}`;
    }
    case "custom":
      return `${at}: ${issue.message}`;
    default:
      return `${at}: ${issue.message}${got === undefined ? "" : `, got ${described(got)}`}`;
  }
}
