// agentport's entry point: dispatch to a fake agent when started as one,
// else parse the command line with citty and turn every outcome into an exit code.
//
// Commands are imported when they are run: `--version` and a fake agent's
// start do not pay for loading every command and its schemas.
import "../io/zod.ts";
import type { CommandDef } from "citty";
import { basename } from "node:path";
import { VERSION } from "../version.ts";
import { EXIT } from "../core/exit.ts";
import { CliError } from "./errors.ts";
import { writeResult } from "./stdout.ts";
import { columnsOf, writeStderr } from "./fd-out.ts";
import { stripAnsi } from "../core/text.ts";
import { wrapHelp } from "./wrap.ts";
import { FAKE_NAMES, type FakeName } from "./self.ts";
import { checkFlags } from "./flags.ts";
import { KEEPER_COMMAND } from "../io/keeper-command.ts";

const COMMANDS: Record<string, () => Promise<CommandDef>> = {
  run: () => import("./commands/run.ts").then((m) => m.runCommand as CommandDef),
  resume: () => import("./commands/resume.ts").then((m) => m.resumeCommand as CommandDef),
  sessions: () => import("./commands/sessions.ts").then((m) => m.sessionsCommand as CommandDef),
  show: () => import("./commands/sessions.ts").then((m) => m.showCommand as CommandDef),
  replay: () => import("./commands/replay.ts").then((m) => m.replayCommand as CommandDef),
  selftest: () => import("./commands/selftest.ts").then((m) => m.selftestCommand as CommandDef),
  doctor: () => import("./commands/doctor.ts").then((m) => m.doctorCommand as CommandDef),
  config: () => import("./commands/config.ts").then((m) => m.configCommand as CommandDef),
  import: () => import("./commands/import.ts").then((m) => m.importCommand as CommandDef),
  ledger: () => import("./commands/ledger.ts").then((m) => m.ledgerCommand as CommandDef),
  bon: () => import("./commands/bon.ts").then((m) => m.bonCommand as CommandDef),
  trust: () => import("./commands/trust.ts").then((m) => m.trustCommand as CommandDef),
  prune: () => import("./commands/prune.ts").then((m) => m.pruneCommand as CommandDef),
  follow: () => import("./commands/follow.ts").then((m) => m.followCommand as CommandDef),
  cancel: () => import("./commands/cancel.ts").then((m) => m.cancelCommand as CommandDef),
  prices: () => import("./commands/prices.ts").then((m) => m.pricesCommand as CommandDef),
};

async function runFake(name: FakeName, argv: string[]): Promise<number> {
  return (await import("./commands/fake.ts")).runFake(name, argv);
}

const EXAMPLES: Record<string, string[]> = {
  agentport: [
    "agentport selftest",
    'agentport run --agent claude "Fix the failing test in src/date.ts"',
    "agentport replay --agent claude captured.jsonl --json",
  ],
  run: [
    'agentport run --agent claude --tools Read,Grep --timeout 600 "Explain src/main.ts"',
    'agentport run --agent pi --model anthropic/claude-sonnet-4 --direct --envelope "Add a --dry flag"',
    'echo "Add a --dry flag" | agentport run --agent claude --json - > verdict.json',
    'agentport run --as builder --envelope --nudges 2 "Add a --dry flag"',
    'agentport run --agent claude --permission-mode acceptEdits --fail-on-refusal --max-turns 8 --max-cost 0.50 "Add a --dry flag"',
    'agentport run --agent claude --append-system-prompt @house-rules.md "Fix it" -- --mcp-config mcp.json --add-dir ../lib',
    "agentport run --agent pi --prompt '-v is not a flag here: explain it'",
    'agentport run --agent opencode --serve --permission-mode acceptEdits --stall 120 "Fix the test"',
  ],
  resume: [
    'agentport resume 0193a1b2 "Now add the tests"',
    "agentport resume 0193a1b2 --json - < next-prompt.txt",
    "agentport resume 0193a1b2 --interactive",
  ],
  sessions: ["agentport sessions", "agentport sessions --agent pi --json > sessions.ndjson"],
  show: ["agentport show 0193a1b2", "agentport show 0193a1b2 --json"],
  replay: ["agentport replay --agent claude stream.jsonl --json", "claude -p --output-format stream-json --verbose hi | agentport replay -"],
  selftest: ["agentport selftest", "agentport selftest --json"],
  doctor: ["agentport doctor", "agentport doctor --json --pi-bin ./node_modules/.bin/pi"],
  config: ["agentport config", "agentport config --as builder --agent claude --json"],
  trust: ["agentport trust", "agentport trust path/to/agentport.json --json"],
  import: ["agentport sessions --json > box1.ndjson && agentport import box1.ndjson", "cat box*.ndjson | agentport import - --json"],
  ledger: ["agentport ledger copy --to postgres://agentport@db.internal/agentport", "agentport ledger copy --ledger sqlite:/old/ledger.sqlite --to sqlite:/new/ledger.sqlite --json"],
  follow: ["agentport follow 0193a1b2", "agentport follow 0193a1b2 --json | jq -c 'select(.kind == \"tool_started\")'"],
  cancel: ["agentport cancel 0193a1b2"],
  prune: ["agentport prune --older-than 30d", "agentport prune --older-than 12h --dry-run --json"],
  bon: ["agentport bon --demo", 'agentport bon specs/bon-demo.md --arms 3 --model anthropic/claude-sonnet-4 --direct --gate "bun test"', 'agentport bon specs/x.md --models a/m1,b/m2 --parallel --jobs 2 --gate "npm test" --json > harvest.json', "agentport bon --dry"],
};

const EXIT_CODES = `EXIT CODES

  0 ok · 1 the agent's run failed · 2 usage or input error · 3 refused before calling (zero tokens)
  4 stopped by supervision (timeout, stall, budget, loop) · 5 environment fault (agent not found, auth, network) · 130 interrupted`;

const main: CommandDef = {
  meta: {
    name: "agentport",
    version: VERSION,
    description: "The door between an automation and headless coding agents",
  },
  subCommands: COMMANDS,
};

/** $COLUMNS, else the terminal's width, else 80. */
function helpWidth(): number {
  return Math.max(40, columnsOf(1) || 80);
}

async function usage(cmd: CommandDef, parent: CommandDef | undefined, name: string): Promise<string> {
  const examples = EXAMPLES[name] ?? [];
  const { renderUsage } = await import("citty");
  const rendered = await renderUsage(cmd, parent);
  // citty colours its usage whatever stdout is: plain text for pipes and NO_COLOR.
  const text = wrapHelp(stripAnsi(rendered), helpWidth());
  return `${text}\n\nEXAMPLES\n\n${examples.map((e) => `  ${e}`).join("\n")}\n${name === "agentport" ? `\n${EXIT_CODES}\n` : ""}`;
}

async function dispatch(argv: string[]): Promise<number> {
  // The keeper first, and loading nothing else: it is started beside every agent.
  if (argv[0] === KEEPER_COMMAND && argv.length === 1) return (await import("../io/keeper.ts")).runKeeper();
  const invokedAs = basename(process.argv0);
  if ((FAKE_NAMES as readonly string[]).includes(invokedAs)) return runFake(invokedAs as FakeName, argv);
  const first = argv[0] ?? "";
  if ((FAKE_NAMES as readonly string[]).includes(first)) return runFake(first as FakeName, argv.slice(1));

  if (argv.length === 1 && (first === "--version" || first === "-v")) {
    await writeResult(VERSION);
    return EXIT.ok;
  }
  // The environment's secrets are known before anything is printed or stored.
  const { secrets } = await import("../core/redact.ts");
  secrets.addEnvironment(process.env);
  const sub = Object.hasOwn(COMMANDS, first) ? await COMMANDS[first]?.() : undefined;
  if (argv.includes("--help") || argv.includes("-h") || argv.length === 0) {
    const text = sub ? await usage(sub, main, first) : await usage(main, undefined, "agentport");
    await writeResult(text);
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  if (!sub) throw new CliError(`unknown command "${first}": try agentport --help`, EXIT.usage);
  await checkFlags(sub, argv.slice(1), first);
  const { runCommand } = await import("citty");
  const { result } = await runCommand(sub, { rawArgs: argv.slice(1) });
  return typeof result === "number" ? result : EXIT.ok;
}

/** run, resume and bon with --json print one verdict-shaped object on every exit, pre-flight failures too (and end --progress json with its record). */
const VERDICT_COMMANDS = new Set(["run", "resume", "bon"]);

/** A flag's value in agentport's own words (`--name V` or `--name=V`), read before citty could. */
function flagValue(own: readonly string[], name: string): string | undefined {
  const at = own.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (at === -1) return undefined;
  const word = own[at]!;
  return word.includes("=") ? word.slice(name.length + 1) : own[at + 1];
}

async function failed(argv: string[], error: unknown): Promise<number> {
  const output = await import("./output.ts");
  let message: string;
  let code: number;
  if (error instanceof CliError) {
    [message, code] = [error.message, error.exitCode];
  } else if ((error as { name?: string }).name === "UnrecordedVerdict") {
    // A verdict printed but not recorded (a full disk), from a command that does not say so itself.
    [message, code] = [(error as Error).message, EXIT.environment];
  } else if ((error as { name?: string }).name === "LedgerUnreachable") {
    // The ledger went away mid-command (past its retries): the environment, never the agent.
    [message, code] = [`ledger: ${(error as Error).message}`, EXIT.environment];
  } else if ((error as { name?: string }).name === "CLIError") {
    // citty's own argument errors (a missing or invalid value) are usage errors.
    [message, code] = [`${(error as Error).message.replace(/\u001b\[[0-9;]*m/g, "")} (see --help)`, EXIT.usage];
  } else if ((error as { name?: string }).name === "SQLiteError") {
    // A damaged ledger (SQLITE_CORRUPT, SQLITE_NOTADB, an I/O error) is the machine's, not a crash: one line, exit 5.
    [message, code] = [`ledger: ${(error as Error).message.split("\n")[0]} (check it with agentport doctor; restore it from a backup or an export)`, EXIT.environment];
  } else {
    [message, code] = [`internal error: ${(error as Error).stack ?? error}`, EXIT.failed];
  }
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const json = own.includes("--json");
  const jsonProgress = flagValue(own, "--progress") === "json";
  // Under --progress json stderr stays NDJSON, also when the arguments were refused before they were read.
  if (jsonProgress) output.setVerbosity({ progress: "json" });
  output.log.error(message);
  // An unrecorded verdict was printed already (one object per exit, never two); a failed stdout takes none.
  const printed = (error as { name?: string }).name === "UnrecordedVerdict" || (error instanceof CliError && error.printed);
  if (VERDICT_COMMANDS.has(argv[0] ?? "") && (json || jsonProgress) && !printed) {
    const { preflightVerdict } = await import("./verdict-output.ts");
    const { secrets } = await import("../core/redact.ts");
    const { safeJson } = await import("../core/text.ts");
    const { isAgentName } = await import("../core/agents.ts");
    const named = flagValue(own, "--agent");
    const agent = isAgentName(named) ? named : "claude";
    const verdict = secrets.verdict(error instanceof CliError && error.verdict ? error.verdict : preflightVerdict(agent, message.replace(/\n/g, "; "), code, error instanceof CliError ? error.faultKind : undefined));
    if (json) await writeResult(safeJson(verdict));
    if (jsonProgress) {
      const { verdictRecord } = await import("../core/progress.ts");
      writeStderr(`${JSON.stringify(verdictRecord(verdict, code))}\n`);
    }
  }
  return code;
}

async function start(): Promise<number> {
  const argv = process.argv.slice(2);
  try {
    return await dispatch(argv);
  } catch (error) {
    return await failed(argv, error);
  }
}

// No top-level await: the binary is compiled to bytecode, which wants a script.
void start().then((code) => process.exit(code));
