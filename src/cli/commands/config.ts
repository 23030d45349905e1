// `agentport config`: the effective configuration of a run, with where each
// value comes from (default, file, environment, flag), and how the chosen
// agent will be told it: its words and the argv a run would start with.
import { defineCommand } from "citty";
import { AGENT_NAMES, adapterOf, adapters } from "../../agents/table.ts";
import { secrets } from "../../core/redact.ts";
import { axesLine, axesOf, shownAxes } from "../../agents/axes.ts";
import type { Preview } from "../../agents/adapter.ts";
import { resolveBin } from "../../agents/resolve-bin.ts";
import { configPath } from "../../config/load.ts";
import { SETTING_KEYS, type SettingKey, type Source } from "../../config/resolve.ts";
import { asFlags, type ShownValue } from "../../config/request.ts";
import {
  agentArgs,
  agentSetup,
  configLookup,
  rosterArgs,
  folder,
  openExistingLedger,
  setupLedger,
  type AgentSetup,
} from "../agent-options.ts";
import { ledgerPath, redactUrl } from "../../io/ledger-url.ts";
import { safeJson } from "../../core/text.ts";
import { commandLine } from "../flags.ts";
import { shownArgv } from "../verdict-output.ts";
import { setVerbosity, writeResult } from "../output.ts";

/** The argv the run would start with (secrets redacted), from the probe the ledger has cached for the agent's binary, else assumed capabilities. */
async function previewArgv(setup: AgentSetup): Promise<Preview & { bin: string }> {
  const adapter = adapterOf(setup.agent);
  const flag = setup.args[`${adapter.bin.command}-bin`];
  const found = resolveBin(adapter.bin.command, typeof flag === "string" ? flag : undefined, adapter.bin.env);
  // No binary here: the argv still shows, with its name, from assumed capabilities.
  if (!found.ok) return { ...(await adapter.previewArgv(setup, adapter.bin.command, null)), bin: adapter.bin.command };
  // The cached probe is a help, not a need: a ledger that cannot be opened leaves the assumed capabilities (config still shows).
  await using ledger = await openExistingLedger(setupLedger(setup), { readonly: true }).catch(() => null);
  return { ...(await adapter.previewArgv(setup, found.path, ledger)), bin: found.path };
}

export const configCommand = defineCommand({
  meta: {
    name: "config",
    description:
      "Show the effective configuration of a run (agentport.json, --as, the environment, the flags), with where each value came from",
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
    // The binaries the settings name (pi's, claude's): else found on PATH.
    for (const row of adapters()) {
      const key = `${row.bin.command}-bin`;
      if (key in values) values[key as SettingKey] ??= Bun.which(row.bin.command);
    }
    // Never a ledger URL's password.
    values.ledger = redactUrl(setup.settings.ledger ?? `sqlite:${ledgerPath(setup.common.home)}`);
    if (process.env.XDG_STATE_HOME && setup.sources.home === "default") setup.sources.home = "environment";
    const settings = {} as Record<SettingKey, { value: ShownValue; source: Source }>;
    for (const key of SETTING_KEYS) settings[key] = { value: values[key], source: setup.sources[key] };
    const loaded = setup.config;
    const file = loaded?.config;
    const name = { value: setup.name, source: (typeof args.as === "string" ? "flag" : setup.name !== null ? "file" : "default") as Source };
    const { translated, words } = adapterOf(setup.agent).translate({ model: setup.model, tools: setup.tools, thinking: setup.thinking });
    const preview = await previewArgv(setup);
    const axes = axesOf(adapterOf(setup.agent), setup.settings.serve);
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
      argv: preview.argv.map((word) => secrets.text(word)),
      /** The version of the cached probe the argv was built from; null: none cached, capabilities assumed. */
      probed: preview.probed,
      route: setup.request.route ?? null,
      /** How the prompt gets in, how the end of a turn is seen, where the session lives, who names it (the row's axes; `--serve` has its own). */
      axes: shownAxes(axes),
    };
    if (args.json) {
      await writeResult(safeJson(report));
      return 0;
    }
    const shown = (v: ShownValue) => (v === null ? "-" : Array.isArray(v) ? v.join(",") : String(v));
    const lines = [
      `config       ${loaded ? `${loaded.path} (${loaded.origin === "found" ? "found from the working folder, trusted" : `from the ${loaded.origin}`})` : lookup.ignored ? `none: ${lookup.ignored.path} ${lookup.ignored.trust === "untrusted" ? "is not trusted" : lookup.ignored.file !== null ? `names ${lookup.ignored.file}, which changed since it was trusted` : "changed since it was trusted"} (agentport trust)` : "none (no agentport.json from here up to the repository root)"}`,
    ];
    const files = report.env_files as string[];
    if (files.length > 0) lines.push(`env files    ${files.join(", ")}`);
    if (file) {
      const agents = Object.entries(file.agents).map(([n, a]) => `${n} (${a.agent})`);
      lines.push(`agents       ${agents.join(", ") || "-"}${file.default_agent ? `; default ${file.default_agent}` : ""}`);
      if (report.spec_folder) lines.push(`spec folder  ${report.spec_folder}`);
      for (const [gate, command] of Object.entries(report.gates))
        lines.push(`gate         ${gate}: ${Array.isArray(command) ? JSON.stringify(command) : command}`);
    }
    lines.push(`named agent  ${shown(name.value)}  (${name.source})`, "");
    const width = Math.max(...SETTING_KEYS.map((k) => k.length));
    const valueWidth = Math.min(60, Math.max(...SETTING_KEYS.map((k) => shown(settings[k].value).length)));
    for (const key of SETTING_KEYS)
      lines.push(`${key.padEnd(width)}  ${shown(settings[key].value).padEnd(valueWidth)}  ${settings[key].source}`);
    lines.push("", `as ${setup.agent}: ${words.join(" ") || "(the agent's defaults)"}`);
    if (report.route !== null) lines.push(`route        ${report.route} (what pi receives as --model)`);
    lines.push(`argv         ${shownArgv(report.argv)}`, `axes         ${axesLine(axes)}`);
    lines.push(
      `capabilities ${preview.probed === null ? `assumed (no probe of ${preview.bin} cached: agentport doctor probes it)` : `probed: ${setup.agent} ${preview.probed} (${preview.bin})`}`,
    );
    await writeResult(lines.join("\n"));
    return 0;
  },
});
