import { defineCommand } from "citty";
import { accessSync, constants, existsSync } from "node:fs";
import { resolveBin } from "../../agents/resolve-bin.ts";
import { adapters, BIN_ARGS } from "../../agents/table.ts";
import type { Finding } from "../../agents/adapter.ts";
import { connectLedger, type Ledger } from "../../io/ledger.ts";
import { ledgerCommandArgs, ledgerChoice } from "../ledger-option.ts";
import { projectConfig } from "../agent-options.ts";
import { stateHome } from "../../io/paths.ts";
import { setVerbosity, writeResult } from "../output.ts";
import { probeSandbox } from "../../io/sandbox.ts";

// Zero tokens: probes what is installed and says what to do about each problem.

export const doctorCommand = defineCommand({
  meta: { name: "doctor", description: "Check the real agents, the ledger and the state folder at zero tokens, and say how to fix what is wrong" },
  args: {
    json: { type: "boolean", description: "One JSON object: every finding" },
    ...BIN_ARGS,
    ...ledgerCommandArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const started = performance.now();
    const findings: (Finding & { ms: number })[] = [];
    // The checks run one after the other: each one's time is the time since the last.
    let last = started;
    const found = (finding: Finding) => {
      const now = performance.now();
      findings.push({ ...finding, ms: Math.round(now - last) });
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
      found({ check: "ledger", ok: integrity === "ok", detail: `${opened.path} (schema ${await opened.schemaVersion()}, integrity ${integrity})`, fix: integrity === "ok" ? undefined : "move the file aside; agentport starts a new ledger" });
    } catch (error) {
      const fix = choice.location.kind === "postgres" ? `check that the server ${choice.shown} is up and takes this login, or choose another ledger with --ledger or $AGENTPORT_LEDGER` : `make ${home} writable, or choose another with --home or $AGENTPORT_HOME`;
      found({ check: "ledger", ok: false, detail: (error as Error).message, fix });
    }
    found({ check: "state folder", ok: existsSync(home), detail: home });

    for (const adapter of adapters()) {
      const flag = args[`${adapter.bin.command}-bin`];
      const given = typeof flag === "string" ? flag : undefined;
      const bin = resolveBin(adapter.bin.command, given, adapter.bin.env);
      // An agent nobody asked for and nobody installed is no problem of this box; one asked for is.
      const asked = given !== undefined || Boolean(process.env[adapter.bin.env]);
      if (!bin.ok && !asked) found({ check: adapter.name, ok: true, detail: `not installed (${adapter.bin.install} to use it)` });
      else if (!bin.ok) found({ check: adapter.name, ok: false, detail: bin.reason, fix: `${adapter.bin.install}, or point $${adapter.bin.env} at it` });
      else for (const f of await adapter.probe(bin.path, ledger)) found(f);
    }
    await ledger?.close();
    found(isolationFinding());

    if (args.json) {
      const checks = findings.map((f) => ({ name: f.check, ok: f.ok, ms: f.ms, error: f.ok ? null : f.detail, detail: f.detail, fix: f.fix ?? null }));
      await writeResult(JSON.stringify({ ok: findings.every((f) => f.ok), checks, ms: Math.round(performance.now() - started) }));
    }
    else await writeResult(findings.map((f) => `${f.ok ? "ok  " : "FAIL"} ${f.check.padEnd(12)} ${f.detail}${f.ok || !f.fix ? "" : `\n     → ${f.fix}`}`).join("\n"));
    return findings.every((f) => f.ok) ? 0 : 5;
  },
});

/** Whether --isolate can work here: optional, so never a failure of the box; how to enable it when not. */
function isolationFinding(): Finding {
  const probe = probeSandbox();
  if (probe.ok) return { check: "isolation", ok: true, detail: "bwrap works: --isolate is available, bon arms run isolated" };
  return { check: "isolation", ok: true, detail: `not available (${probe.reason}): --isolate is refused (exit 5), bon arms run unisolated; to enable: ${probe.fix}`, fix: probe.fix };
}
