// `agentport config`: the effective configuration of a run, with where each
// value comes from (default, file, environment, flag), and how the chosen
// agent will be told it (the translation for pi or claude).
import { defineCommand } from "citty";
import { join } from "node:path";
import { piThinking, piTools, translate } from "../../core/translate.ts";
import { AGENT_NAMES, adapterOf } from "../../agents/table.ts";
import { secrets } from "../../core/redact.ts";
import { parseCapabilities, type PiCapabilities } from "../../core/pi/capabilities.ts";
import { ENVELOPE_TOOL } from "../../core/pi/reducer.ts";
import { claudeArgv } from "../../agents/claude.ts";
import { piArgv, route } from "../../agents/pi-argv.ts";
import { configPath } from "../../config/load.ts";
import { SETTING_KEYS, type SettingKey, type Source } from "../../config/resolve.ts";
import { asFlags, type ShownValue } from "../../config/request.ts";
import { agentArgs, agentSetup, configLookup, rosterArgs, folder, type AgentSetup } from "../agent-options.ts";
import { agentExtras } from "../../agents/setup.ts";
import { ledgerPath, redactUrl } from "../../io/ledger-url.ts";
import { safeJson } from "../../core/text.ts";
import { commandLine } from "../flags.ts";
import { shownArgv } from "../verdict-output.ts";
import { setVerbosity, writeResult } from "../output.ts";

/** The exact argv the run would start with (the session id is a placeholder, secrets redacted). */
function previewArgv(setup: AgentSetup, bin: string): string[] | null {
  // codex and gemini build their own command lines (run --verbose prints them).
  if (setup.agent !== "pi" && setup.agent !== "claude") return null;
  const translated = translate(setup.agent, { model: setup.model, tools: setup.tools, thinking: setup.thinking });
  const extras = agentExtras(setup);
  const sessionId = "<session-id>";
  if (setup.agent === "claude") return claudeArgv({ ...extras, bin, sessionId, model: translated.model, tools: translated.tools, appendSystemPrompt: setup.appendSystemPrompt });
  const pi = setup.pi;
  return piArgv({
    bin,
    caps: ASSUMED_PI,
    mode: "json",
    sessionDir: pi.sessionDir,
    sessionId,
    sessionFile: join(pi.sessionDir, "<new session file>.jsonl"),
    model: setup.model,
    gateway: pi.gateway,
    direct: pi.direct,
    thinking: piThinking(setup.thinking),
    tools: pi.tools && piTools(pi.tools),
    extensions: setup.schema !== null || pi.requireExt.length > 0 ? [join(setup.common.home, "extensions", "agentport.ts")] : [],
    envelopeTool: setup.schema !== null ? ENVELOPE_TOOL : undefined,
    appendSystemPrompt: setup.appendSystemPrompt,
    passThrough: extras.passThrough,
  });
}

/** pi 0.73.1's flags (ground truth): the preview does not start pi to probe it. */
const ASSUMED_PI: PiCapabilities = parseCapabilities("0.73.1", "--session --session-dir --fork --no-skills --no-prompt-templates --no-context-files --tools --thinking --offline --extension");

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
    const line = commandLine(args, rawArgs);
    const lookup = await configLookup(args, cwd);
    const setup = agentSetup({ flags: line.flags, passThrough: line.passThrough }, cwd, { useDefault: true, config: lookup.loaded });
    const values = asFlags(setup.settings);
    // What the defaults stand for on this machine.
    values.home = setup.common.home;
    values["session-dir"] = setup.pi.sessionDir;
    values["pi-bin"] ??= Bun.which("pi");
    values["claude-bin"] ??= Bun.which("claude");
    // Never a ledger URL's password.
    values.ledger = redactUrl(setup.settings.ledger ?? `sqlite:${ledgerPath(setup.common.home)}`);
    if (process.env.XDG_STATE_HOME && setup.sources.home === "default") setup.sources.home = "environment";
    const settings = {} as Record<SettingKey, { value: ShownValue; source: Source }>;
    for (const key of SETTING_KEYS) settings[key] = { value: values[key], source: setup.sources[key] };
    const bin = (setup.agent === "pi" ? values["pi-bin"] : values["claude-bin"]) ?? setup.agent;
    const loaded = setup.config;
    const file = loaded?.config;
    const name = { value: setup.name, source: (typeof args.as === "string" ? "flag" : setup.name !== null ? "file" : "default") as Source };
    const { translated, words } = adapterOf(setup.agent).translate({ model: setup.model, tools: setup.tools, thinking: setup.thinking });
    const argv = previewArgv(setup, String(bin));
    const report = {
      config: loaded ? { path: loaded.path, origin: loaded.origin, sha256: loaded.sha256, trust: loaded.trust } : null,
      /** A config found here but not used: never trusted, or changed since (`agentport trust`). */
      ignored_config: lookup.ignored,
      env_files: setup.envFiles,
      default_agent: file?.default_agent ?? null,
      spec_folder: loaded && file?.spec_folder ? configPath(loaded, file.spec_folder) : null,
      gates: file?.gates ?? {},
      agents: file?.agents ?? {},
      name,
      settings,
      translated,
      argv: argv?.map((word) => secrets.text(word)) ?? null,
      route: setup.agent === "pi" && setup.model ? route(setup.model, setup.pi.gateway, setup.pi.direct) : null,
    };
    if (args.json) {
      await writeResult(safeJson(report));
      return 0;
    }
    const shown = (v: ShownValue) => (v === null ? "-" : Array.isArray(v) ? v.join(",") : String(v));
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
    if (report.route !== null) lines.push(`route        ${report.route} (what pi receives as --model)`);
    if (argv !== null) lines.push(`argv         ${shownArgv(argv)}`);
    await writeResult(lines.join("\n"));
    return 0;
  },
});
