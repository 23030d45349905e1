import { defineCommand } from "citty";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { resolveBin } from "../../agents/resolve-bin.ts";
import { adapters, BIN_ARGS } from "../../agents/table.ts";
import type { AgentAdapter, Finding } from "../../agents/adapter.ts";
import { AGENT_NAMES, AGENT_TRAITS, type AgentName } from "../../core/agents.ts";
import { holdsLogin, versionFit, type VersionFit } from "../../core/readiness.ts";
import { DEFAULT_GATEWAY } from "../../config/resolve.ts";
import { connectLedger, type Ledger } from "../../io/ledger.ts";
import { ledgerCommandArgs, ledgerChoice } from "../ledger-option.ts";
import { projectConfig } from "../agent-options.ts";
import { stateHome } from "../../io/paths.ts";
import { setVerbosity, writeResult } from "../output.ts";
import { FAKE_NAMES } from "../../core/agents.ts";
import { probeSandbox } from "../../io/sandbox.ts";
import { probeAcpCommand } from "../../agents/acp/probe.ts";

// Zero tokens: can a run start here? Probes what is installed, looks for each
// agent's credentials (names, never values) and says what to do about each problem.

/** A finding as doctor prints it: a warning is said, and fails nothing. */
type Level = "ok" | "warn" | "fail";
type Checked = Finding & { level: Level; ms: number };

/** One agent's answer: installed, its version against the tested range, its credentials, and whether a run can start. */
interface AgentReport {
  name: AgentName;
  installed: boolean;
  bin: string | null;
  version: string | null;
  /** null: acp, a protocol with no version of its own. */
  tested: { low: string; high: string } | null;
  version_fit: VersionFit | null;
  credentials: string[];
  ready: boolean;
}

export const doctorCommand = defineCommand({
  meta: {
    name: "doctor",
    description:
      "Say whether a run can start here, at zero tokens: each agent installed, its version against the tested range, its credentials (names, never values), the ledger and the state folder; and how to fix what is wrong",
  },
  args: {
    agent: { type: "enum", options: [...AGENT_NAMES], description: "Only this agent: exit 0 only when it can start a run" },
    json: { type: "boolean", description: "One JSON object: every finding, and each agent's answer" },
    "acp-command": {
      type: "string",
      valueHint: "CMD",
      description:
        "acp: start this ACP agent and send it initialize only (zero tokens): does it answer, with what name, version and capabilities",
    },
    ...BIN_ARGS,
    ...ledgerCommandArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const started = performance.now();
    const findings: Checked[] = [];
    // The checks run one after the other: each one's time is the time since the last.
    let last = started;
    const found = (finding: Finding, level: Level = finding.ok ? "ok" : "fail") => {
      const now = performance.now();
      findings.push({ ...finding, ok: level !== "fail", level, ms: Math.round(now - last) });
      last = now;
    };
    const home = stateHome(args.home);
    const choice = ledgerChoice(args, home, await projectConfig(args, process.cwd()));
    let ledger: Ledger | null = null;
    try {
      const opened = await connectLedger(home, choice.location);
      ledger = opened;
      if (choice.location.kind === "sqlite") accessSync(home, constants.W_OK);
      const integrity = await opened.integrityCheck();
      found({
        check: "ledger",
        ok: integrity === "ok",
        detail: `${opened.path} (schema ${await opened.schemaVersion()}, integrity ${integrity})`,
        fix: integrity === "ok" ? undefined : "move the file aside; agentport starts a new ledger",
      });
    } catch (error) {
      const fix =
        choice.location.kind === "postgres"
          ? `check that the server ${choice.shown} is up and takes this login, or choose another ledger with --ledger or $AGENTPORT_LEDGER`
          : `make ${home} writable, or choose another with --home or $AGENTPORT_HOME`;
      found({ check: "ledger", ok: false, detail: (error as Error).message, fix });
    }
    found({ check: "state folder", ok: existsSync(home), detail: home });
    const base = findings.every((f) => f.ok);

    const named = args.agent as AgentName | undefined;
    const agents: AgentReport[] = [];
    for (const adapter of adapters().filter((a) => named === undefined || a.name === named)) {
      agents.push(await examine(adapter, args, named === adapter.name, ledger, found));
    }
    await ledger?.close();
    found(isolationFinding());

    const ready = agents.filter((a) => a.ready).map((a) => a.name);
    if (named === undefined && ready.length === 0) {
      const installed = agents.filter((a) => a.installed).map((a) => a.name);
      const why =
        installed.length === 0 ? "no agent is installed" : `installed: ${installed.join(", ")}, none with credentials and a working probe`;
      found({
        check: "agents",
        ok: false,
        detail: `none can start a run here (${why})`,
        fix: "install an agent and give it credentials (see the lines above)",
      });
    }
    const ok = named === undefined ? findings.every((f) => f.ok) : base && ready.includes(named);
    if (args.json) {
      const checks = findings.map((f) => ({
        name: f.check,
        ok: f.ok,
        level: f.level,
        ms: f.ms,
        error: f.ok ? null : f.detail,
        detail: f.detail,
        fix: f.fix ?? null,
      }));
      await writeResult(JSON.stringify({ ok, ready, agents, checks, ms: Math.round(performance.now() - started) }));
    } else {
      const width = Math.max(12, ...findings.map((f) => f.check.length));
      const lines = findings.map(
        (f) =>
          `${f.level === "ok" ? "ok  " : f.level === "warn" ? "warn" : "FAIL"} ${f.check.padEnd(width)} ${f.detail}${f.level === "ok" || !f.fix ? "" : `\n     → ${f.fix}`}`,
      );
      await writeResult([...lines, `ready: ${ready.length === 0 ? "none" : ready.join(", ")}`].join("\n"));
    }
    return ok ? 0 : 5;
  },
});

/** Probe one agent: installed, its own findings, its version against the tested range, its credentials. */
async function examine(
  adapter: AgentAdapter,
  args: Record<string, unknown>,
  namedHere: boolean,
  ledger: Ledger | null,
  found: (f: Finding, level?: Level) => void,
): Promise<AgentReport> {
  const name = adapter.name;
  if (!AGENT_TRAITS[name].namedBinary) {
    // No binary of its own (acp: the command is named per run): probed when --acp-command names one, else not ready.
    const named = typeof args["acp-command"] === "string" ? args["acp-command"] : null;
    const probed = named === null ? await adapter.probe("", ledger) : await probeAcpCommand(named, process.env, process.cwd());
    for (const f of probed) found(f);
    const ok = named !== null && probed.every((f) => f.ok);
    return {
      name,
      installed: ok,
      bin: ok ? named : null,
      version: probed[0]?.version ?? null,
      tested: adapter.readiness.tested,
      version_fit: null,
      credentials: [],
      ready: ok,
    };
  }
  const flag = args[`${adapter.bin.command}-bin`];
  const given = typeof flag === "string" ? flag : undefined;
  const bin = resolveBin(adapter.bin.command, given, adapter.bin.env);
  const { tested } = adapter.readiness;
  const report: AgentReport = {
    name,
    installed: bin.ok,
    bin: bin.ok ? bin.path : null,
    version: null,
    tested,
    version_fit: null,
    credentials: [],
    ready: false,
  };
  // An agent nobody asked for and nobody installed is no problem of this box; one asked for is.
  const asked = namedHere || given !== undefined || Boolean(process.env[adapter.bin.env]);
  if (!bin.ok) {
    if (asked) found({ check: name, ok: false, detail: bin.reason, fix: `${adapter.bin.install}, or point $${adapter.bin.env} at it` });
    else found({ check: name, ok: true, detail: `not installed (${adapter.bin.install} to use it)` });
    return report;
  }
  // The credentials before the probe: a probe may start the agent, and an agent may write an empty login file.
  const creds = (FAKE_NAMES as readonly string[]).includes(basename(bin.path))
    ? null
    : adapter.readiness.credentials(process.env, loginFile, process.env.AGENTPORT_GATEWAY ?? DEFAULT_GATEWAY);
  const probed = await adapter.probe(bin.path, ledger);
  for (const f of probed) found(f);
  report.version = probed.find((f) => f.check === name)?.version ?? null;
  report.version_fit = versionFit(tested, report.version ?? undefined);
  const range = tested === null ? "" : tested.low === tested.high ? tested.low : `${tested.low} to ${tested.high}`;
  if (report.version !== null && tested !== null) {
    const fit = report.version_fit;
    found(
      {
        check: `${name} version`,
        ok: true,
        detail: fit === "tested" ? `${report.version}: tested (${range})` : `${report.version}: ${fit} than tested (${range}); it may work`,
      },
      fit === "tested" ? "ok" : "warn",
    );
  }
  const check = `${name} credentials`;
  if (creds === null) found({ check, ok: true, detail: "none needed: a fake agent" });
  else if (creds.enough)
    found({ check, ok: true, detail: `found ${creds.found.join(", ")}${creds.note ? `; ${creds.note}` : ""}` }, creds.note ? "warn" : "ok");
  else
    found(
      { check, ok: false, detail: creds.found.length === 0 ? "none found" : `not enough: ${creds.found.join(", ")}`, fix: creds.fix },
      namedHere ? "fail" : "warn",
    );
  report.credentials = creds?.found ?? [];
  const enough = creds === null || creds.enough;
  report.ready = enough && probed.every((f) => f.ok);
  return report;
}

/** Whether a login file holds a login (read only to say so: nothing of it is kept or printed). */
function loginFile(path: string): boolean {
  try {
    return holdsLogin(JSON.parse(readFileSync(path, "utf8")));
  } catch {
    return false;
  }
}

/** Whether --isolate can work here: optional, so never a failure of the box; how to enable it when not. */
function isolationFinding(): Finding {
  const probe = probeSandbox();
  if (probe.ok) return { check: "isolation", ok: true, detail: "bwrap works: --isolate is available, bon arms run isolated" };
  return {
    check: "isolation",
    ok: true,
    detail: `not available (${probe.reason}): --isolate is refused (exit 5), bon arms run unisolated; to enable: ${probe.fix}`,
    fix: probe.fix,
  };
}
