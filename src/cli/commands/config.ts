// `agentport config`: the effective configuration of a run, with where each
// value comes from (default, file, environment, flag), and how the chosen
// agent will be told it (the translation for pi or claude).
import { defineCommand } from "citty";
import { join } from "node:path";
import { DEFAULT_BUDGET_GRACE_MS, DEFAULT_BUDGET_MODE, DEFAULT_CACHE_READ_WEIGHT } from "../../core/budget.ts";
import { DEFAULT_MAX_LINE_BYTES } from "../../core/frame.ts";
import { DEFAULT_LOOP_REPEAT } from "../../core/loop-detector.ts";
import { AGENT_NAMES, adapterOf } from "../../agents/table.ts";
import { DEFAULT_GATEWAY } from "../../agents/pi-argv.ts";
import { configPath } from "../../config/load.ts";
import { DEFAULT_NUDGES } from "../../config/schema.ts";
import { DEFAULT_AGENT, SETTING_KEYS, type SettingKey, type Source } from "../../config/resolve.ts";
import { stateHome } from "../../io/paths.ts";
import { ledgerPath, redactUrl } from "../../io/ledger-url.ts";
import { agentArgs, agentSetup, configLookup, rosterArgs, folder } from "../agent-options.ts";
import { setVerbosity, writeResult } from "../output.ts";
import { withEnvFiles } from "../common.ts";
import { safeJson } from "../../core/text.ts";

type Value = string | boolean | null;

/** What a setting is when nothing sets it (null: the agent's own default, or off). */
function defaults(home: string): Record<SettingKey, Value> {
  return {
    agent: DEFAULT_AGENT,
    model: null,
    thinking: null,
    tools: null,
    timeout: null,
    stall: null,
    "max-tokens": null,
    budget: DEFAULT_BUDGET_MODE,
    "cache-read-weight": String(DEFAULT_CACHE_READ_WEIGHT),
    "budget-grace": String(DEFAULT_BUDGET_GRACE_MS / 1000),
    loop: "on",
    "loop-repeat": String(DEFAULT_LOOP_REPEAT),
    linger: "10",
    profile: null,
    "require-ext": null,
    schema: null,
    envelope: false,
    nudges: String(DEFAULT_NUDGES),
    gateway: DEFAULT_GATEWAY,
    direct: false,
    "session-dir": join(home, "pi-sessions"),
    "pi-bin": Bun.which("pi"),
    "claude-bin": Bun.which("claude"),
    home,
    ledger: `sqlite:${ledgerPath(home)}`,
    "max-line-bytes": String(DEFAULT_MAX_LINE_BYTES),
    "keep-stream": "on",
  };
}

export const configCommand = defineCommand({
  meta: {
    name: "config",
    description: "Show the effective configuration of a run (agentport.json, --as, the environment, the flags), with where each value came from",
  },
  args: {
    agent: { type: "enum", options: [...AGENT_NAMES], description: "Which agent (default: the named agent's, else claude)" },
    ...rosterArgs,
    ...agentArgs,
    json: { type: "boolean", description: "One JSON object: the file, its agents, and every setting with its value and source" },
  },
  async run({ args, rawArgs }) {
    setVerbosity(args);
    const cwd = folder(args.cwd);
    const lookup = await configLookup(args, cwd);
    const setup = agentSetup(withEnvFiles(args, rawArgs), cwd, { useDefault: true, config: lookup.loaded });
    const home = setup.common.home;
    const base = defaults(home);
    if (process.env.XDG_STATE_HOME && setup.sources.home === undefined) setup.sources.home = "environment";
    const settings = {} as Record<SettingKey, { value: Value; source: Source }>;
    for (const key of SETTING_KEYS) {
      const source = setup.sources[key];
      const raw = setup.args[key];
      settings[key] = source === undefined ? { value: base[key], source: "default" } : { value: typeof raw === "string" || typeof raw === "boolean" ? raw : null, source };
    }
    if (setup.sources["session-dir"] === undefined) settings["session-dir"].value = setup.pi.sessionDir;
    if (setup.sources.home === undefined) settings.home.value = stateHome(undefined);
    if (typeof settings.ledger.value === "string") settings.ledger.value = redactUrl(settings.ledger.value); // never its password
    const loaded = setup.config;
    const file = loaded?.config;
    const name = { value: setup.name, source: (typeof args.as === "string" ? "flag" : setup.name !== null ? "file" : "default") as Source };
    const { translated, words } = adapterOf(setup.agent).translate({ model: setup.model, tools: setup.tools, thinking: setup.thinking });
    const report = {
      config: loaded ? { path: loaded.path, origin: loaded.origin, sha256: loaded.sha256, trust: loaded.trust } : null,
      /** A config found here but not used: never trusted, or changed since (`agentport trust`). */
      ignored_config: lookup.ignored,
      env_files: setup.args["env-file"] ?? [],
      default_agent: file?.default_agent ?? null,
      spec_folder: loaded && file?.spec_folder ? configPath(loaded, file.spec_folder) : null,
      gates: file?.gates ?? {},
      agents: file?.agents ?? {},
      name,
      settings,
      translated,
    };
    if (args.json) {
      await writeResult(safeJson(report));
      return 0;
    }
    const shown = (v: Value) => (v === null ? "-" : String(v));
    const lines = [
      `config       ${loaded ? `${loaded.path} (${loaded.origin === "found" ? "found from the working folder, trusted" : `from the ${loaded.origin}`})` : lookup.ignored ? `none: ${lookup.ignored.path} is ${lookup.ignored.trust === "changed" ? "changed since it was trusted" : "not trusted"} (agentport trust)` : "none (no agentport.json from here up to the repository root)"}`,
    ];
    const files = report.env_files as string[];
    if (files.length > 0) lines.push(`env files    ${files.join(", ")}`);
    if (file) {
      const agents = Object.entries(file.agents).map(([n, a]) => `${n} (${a.agent})`);
      lines.push(`agents       ${agents.join(", ") || "-"}${file.default_agent ? `; default ${file.default_agent}` : ""}`);
      if (report.spec_folder) lines.push(`spec folder  ${report.spec_folder}`);
      for (const [gate, command] of Object.entries(report.gates)) lines.push(`gate         ${gate}: ${Array.isArray(command) ? JSON.stringify(command) : command}`);
    }
    lines.push(`named agent  ${shown(name.value)}  (${name.source})`, "");
    const width = Math.max(...SETTING_KEYS.map((k) => k.length));
    const valueWidth = Math.min(60, Math.max(...SETTING_KEYS.map((k) => shown(settings[k].value).length)));
    for (const key of SETTING_KEYS) lines.push(`${key.padEnd(width)}  ${shown(settings[key].value).padEnd(valueWidth)}  ${settings[key].source}`);
    lines.push("", `as ${setup.agent}: ${words.join(" ") || "(the agent's defaults)"}`);
    await writeResult(lines.join("\n"));
    return 0;
  },
});
