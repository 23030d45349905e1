// The fake pi: speaks `pi -p --mode json` (and plain `-p` text) as captured
// from pi 0.73.1, scripted by a scenario, in two dialects chosen by
// $AGENTPORT_FAKE_PI_DIALECT: "0.73.1" (default, the pi on npm) and "0.85"
// (the seed's pi: --session-id, --approve, `--`, entry_appended). It takes
// pi's own argv, reads stdin to EOF like pi, keeps pi's session files and
// follows pi's order of checks, so agentport drives it exactly as the real one.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import type { Json } from "../../core/record.ts";
import { logInvocation } from "../claude.ts";
import { resolveScenario, writeOut } from "../runtime.ts";
import { parsePiArgs, withoutScenarioFlag, type PiArgs } from "./args.ts";
import type { RunContext } from "./context.ts";
import {
  BUILTIN_TOOLS,
  DEFAULT_TOOLS,
  INVENTORY_TYPE,
  piDialect,
  REPORT_TOOL,
  THINKING_LEVELS,
  VERSION,
  type PiDialect,
} from "./dialect.ts";
import { Exit, PiFailure } from "./failures.ts";
import { expandTilde, loadSettings } from "./files.ts";
import { helpText } from "./help.ts";
import { runRpc } from "./rpc.ts";
import { PiRun } from "./run.ts";
import { BUILTIN_SCENARIOS, ScenarioSchema, type Scenario } from "./scenarios.ts";
import { chooseSession } from "./sessions.ts";
import { stdinText } from "./stdin.ts";

function enabledTools(args: PiArgs): Set<string> {
  const extensionTools = args.extensions.length > 0 ? [REPORT_TOOL] : [];
  const available = [...BUILTIN_TOOLS, ...extensionTools];
  if (args.noTools) return new Set();
  if (args.tools) return new Set(args.tools.filter((t) => available.includes(t)));
  if (args.noBuiltinTools) return new Set(extensionTools);
  return new Set([...DEFAULT_TOOLS, ...extensionTools]);
}

function resolveModel(args: PiArgs): { provider: string; model: string; thinking?: string } {
  let provider = args.provider;
  let model = args.model;
  let thinking: string | undefined;
  if (model) {
    const colon = model.lastIndexOf(":");
    if (colon > 0 && THINKING_LEVELS.includes(model.slice(colon + 1))) {
      thinking = model.slice(colon + 1);
      model = model.slice(0, colon);
    }
    const slash = model.indexOf("/");
    if (!provider && slash > 0) {
      provider = model.slice(0, slash);
      model = model.slice(slash + 1);
    }
  }
  return { provider: provider ?? "standin", model: model ?? "standin-model", thinking };
}

export async function fakePi(argv: string[], scenarioSpec: string | undefined): Promise<number> {
  const dialect = piDialect();
  const scenario = await resolveScenario(scenarioSpec ?? "text", BUILTIN_SCENARIOS, ScenarioSchema);
  logInvocation("fake-pi", argv);
  try {
    return await runPi(parsePiArgs(withoutScenarioFlag(argv), dialect), dialect, scenario);
  } catch (error) {
    if (error instanceof Exit) return error.code;
    if (error instanceof PiFailure) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

async function runPi(args: PiArgs, dialect: PiDialect, scenario: Scenario): Promise<number> {
  const version = VERSION[dialect];
  // 1. Argument diagnostics: an unknown short option (or a prompt starting with "-") ends it here.
  for (const d of args.diagnostics) process.stderr.write(`${d.type === "error" ? "Error" : "Warning"}: ${d.message}\n`);
  if (args.diagnostics.some((d) => d.type === "error")) return 1;
  // Outside interactive mode pi moves console output to stderr: --version and --help land there.
  const interactive = args.mode !== "json" && args.mode !== "rpc" && !args.print && process.stdin.isTTY === true;
  const say = (text: string) => (interactive ? process.stdout : process.stderr).write(text);
  if (args.version) {
    say(`${version}\n`);
    return 0;
  }
  if (args.export) {
    process.stderr.write("fake-pi: --export is not implemented by the fake pi\n");
    return 2;
  }
  if (args.fork) {
    const conflicts = [
      args.session && "--session",
      args.continue && "--continue",
      args.resume && "--resume",
      args.noSession && "--no-session",
    ].filter(Boolean);
    if (conflicts.length > 0) throw new PiFailure(`Error: --fork cannot be combined with ${conflicts.join(", ")}`);
  }

  // 2. The session, which decides the cwd pi runs in.
  const startCwd = process.cwd();
  const settings = loadSettings(startCwd);
  const envSessionDir = process.env.PI_CODING_AGENT_SESSION_DIR;
  const settingsSessionDir = typeof settings.sessionDir === "string" ? expandTilde(settings.sessionDir) : undefined;
  const sessionDir = args.sessionDir ?? (envSessionDir ? expandTilde(envSessionDir) : undefined) ?? settingsSessionDir;
  const session = await chooseSession(args, dialect, startCwd, sessionDir);
  if (session.file && !existsSync(session.cwd)) {
    throw new PiFailure(
      `Stored session working directory does not exist: ${session.cwd}\nSession file: ${session.file}\nCurrent working directory: ${startCwd}`,
    );
  }
  if (session.cwd !== startCwd) process.chdir(session.cwd);

  // 3. Extensions load: the inventory our own extension would write.
  const extensionPaths = args.extensions.map((p) => resolve(startCwd, p));
  const inventory = { pi_version: version, extensions: extensionPaths.map((p) => basename(p).replace(/\.ts$/, "")) };
  const inventoryFile = process.env.AGENTPORT_INVENTORY_FILE;
  const extensionsLoad = extensionPaths.length > 0 && extensionPaths.every((p) => existsSync(p));
  if (extensionsLoad && inventoryFile) writeFileSync(inventoryFile, `${JSON.stringify(inventory)}\n`);

  if (args.help) {
    say(helpText(dialect));
    return 0;
  }
  const { provider, model, thinking: modelThinking } = resolveModel(args);
  if (args.listModels !== undefined) {
    say(`provider  model  context  max-out  thinking  images\n${provider}  ${model}  100K  4.1K  no  no\n`);
    return 0;
  }

  // 4. stdin, read to EOF before anything else runs (left open, pi hangs here). RPC reads commands from it instead.
  const rpc = args.mode === "rpc";
  const piped = rpc ? "" : (await stdinText()).trim();

  // @file arguments, as text (pi's processFileArguments; images are not told apart here).
  let fileText = "";
  for (const fileArg of args.fileArgs) {
    const path = resolve(process.cwd(), expandTilde(fileArg));
    if (!existsSync(path)) throw new PiFailure(`Error: File not found: ${path}`);
    const content = readFileSync(path, "utf8");
    if (content.length > 0) fileText += `<file name="${path}">\n${content}\n</file>\n`;
  }

  // 5. Runtime diagnostics: unknown long options (no extension claimed them), extensions that do not load.
  const runtimeErrors: string[] = [];
  const unknown = [...args.unknownFlags.keys()];
  if (unknown.length > 0)
    runtimeErrors.push(`Unknown option${unknown.length === 1 ? "" : "s"}: ${unknown.map((n) => `--${n}`).join(", ")}`);
  for (const path of extensionPaths) if (!existsSync(path)) runtimeErrors.push(`Failed to load extension "${path}": file not found`);
  for (const message of runtimeErrors) process.stderr.write(`Error: ${message}\n`);
  if (runtimeErrors.length > 0) return 1;
  if (interactive) {
    // pi's terminal UI, as far as a test needs it: where it runs and on which session.
    process.stdout.write(`fake-pi interactive: cwd=${process.cwd()} session=${session.id} file=${session.file ?? "-"}\n`);
    return 0;
  }

  // 6. Print mode (or RPC).
  const json = args.mode === "json" || rpc;
  const thinkingLevel = args.thinking ?? modelThinking ?? "off";
  if (!session.hasMessages) {
    session.append({ type: "model_change", provider, modelId: model });
    session.append({ type: "thinking_level_change", thinkingLevel });
  } else if (!session.hasThinkingEntry) {
    session.append({ type: "thinking_level_change", thinkingLevel });
  }
  const retrySettings = (settings.retry ?? {}) as Json;
  const runCtx: RunContext = {
    json,
    session,
    provider,
    model,
    enabledTools: enabledTools(args),
    retry: {
      enabled: retrySettings.enabled !== false,
      maxRetries: typeof retrySettings.maxRetries === "number" ? retrySettings.maxRetries : 3,
      baseDelayMs: typeof retrySettings.baseDelayMs === "number" ? retrySettings.baseDelayMs : 2000,
    },
  };
  // A continued session plays the scenario's `resumed` steps, when it has them (a nudge, a resume).
  const played = !rpc && session.hasMessages && scenario.resumed !== undefined ? { ...scenario, steps: scenario.resumed } : scenario;
  const run = new PiRun(played, runCtx);
  process.on("SIGTERM", () => process.exit(143));
  process.on("SIGHUP", () => process.exit(129));
  if (rpc)
    return await runRpc({
      dialect,
      scenario,
      run,
      ctx: runCtx,
      thinkingLevel,
      extensionPaths,
      inventory,
      startProvider: provider,
      startModel: model,
    });

  if (json) await writeOut(`${JSON.stringify(session.header)}\n`);
  const messages = [...args.messages];
  const first = [piped || undefined, fileText || undefined, messages.shift()].filter((p): p is string => p !== undefined);
  const prompts = scenario.ignorePrompt ? [] : [...(first.length > 0 ? [first.join("")] : []), ...messages];
  if (prompts.length > 0 && dialect === "0.85" && extensionPaths.length > 0) {
    const entry = session.append({ type: "custom", customType: INVENTORY_TYPE, data: inventory });
    if (json) await writeOut(`${JSON.stringify({ type: "entry_appended", entry })}\n`);
  }
  for (const prompt of prompts) {
    const code = await run.prompt(prompt);
    if (code !== undefined) return code;
  }
  const after = await run.afterRun(played.after);
  if (after !== undefined) return after;
  return json ? 0 : run.textModeResult();
}
