// agentport's entry point: dispatch to a fake agent when started as one,
// else parse the command line with citty and turn every outcome into an exit code.
//
// Commands are imported when they are run: `--version` and a fake agent's
// start do not pay for loading every command and its schemas.
import "../io/zod.ts";
import { basename } from "node:path";
import { VERSION } from "../version.ts";
import { EXIT } from "../core/exit.ts";
import { AgentportError, EXIT_OF_KIND, usageError } from "./errors.ts";
import { writeResult } from "./stdout.ts";
import { stdoutClosedAtStart, writeStderr } from "./fd-out.ts";
import { COMMANDS } from "./command-table.ts";
import { FAKE_NAMES, type FakeName } from "../core/agents.ts";
import { checkFlags } from "./flags.ts";
import { KEEPER_COMMAND } from "../io/keeper-command.ts";

async function runFake(name: FakeName, argv: string[]): Promise<number> {
  return (await import("./commands/fake.ts")).runFake(name, argv);
}

async function dispatch(argv: string[]): Promise<number> {
  // The keeper first, and loading nothing else: it is started beside every agent.
  if (argv[0] === KEEPER_COMMAND && argv.length === 1) return (await import("../io/keeper.ts")).runKeeper();
  const invokedAs = basename(process.argv0);
  if ((FAKE_NAMES as readonly string[]).includes(invokedAs)) return runFake(invokedAs as FakeName, argv);
  const first = argv[0] ?? "";
  if ((FAKE_NAMES as readonly string[]).includes(first)) return runFake(first as FakeName, argv.slice(1));

  // A result written nowhere is no success: one line, exit 5, before anything runs.
  if (stdoutClosedAtStart())
    throw new AgentportError(
      "environment",
      "stdout is closed (>&-): the result would be written nowhere; give agentport a stdout (>/dev/null to drop it)",
    );
  if (argv.length === 1 && (first === "--version" || first === "-v")) {
    await writeResult(VERSION);
    return EXIT.ok;
  }
  // The environment's secrets are known before anything is printed or stored.
  const { secrets } = await import("../core/redact.ts");
  secrets.addEnvironment(process.env);
  const known = Object.hasOwn(COMMANDS, first);
  // --help before `--` (after it, the words are the agent's).
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  if (own.includes("--help") || own.includes("-h") || argv.length === 0) {
    const { helpOf } = await import("./help.ts");
    await writeResult(await helpOf(known ? first : undefined));
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  const sub = known ? await COMMANDS[first]?.() : undefined;
  if (!sub) throw usageError(`unknown command "${first}": try agentport --help`);
  await checkFlags(sub, argv.slice(1), first);
  const { parseArgs, runCommand } = await import("citty");
  try {
    // citty's own argument errors (a missing or invalid value) are usage errors: found here, before the command runs.
    parseArgs(argv.slice(1), (typeof sub.args === "function" ? await sub.args() : await sub.args) ?? {});
  } catch (error) {
    throw usageError(`${(error as Error).message.replace(/\u001b\[[0-9;]*m/g, "")} (see --help)`);
  }
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

/** Where a bug is reported. */
const ISSUES = "https://github.com/agentport/agentport/issues";

/**
 * A crash of agentport itself (never of the input): one line that says so and
 * where to report it; the stack only with --verbose. A run's folder keeps the
 * phase it ended (agentport show names it).
 */
function internalError(error: unknown, argv: string[]): string {
  const stack = argv.includes("--verbose") ? `\n${(error as Error).stack ?? ""}` : "";
  return `internal error (agentport ${VERSION}): ${(error as Error).message ?? String(error)}. This is a bug in agentport: please report it at ${ISSUES} with this line, the command and the run folder (agentport show <session>; --verbose adds the stack)${stack}`;
}

/** Any error as agentport's own: a damaged SQLite ledger is the machine's; anything else not of ours is a bug. */
async function asOwn(error: unknown): Promise<AgentportError> {
  if (error instanceof AgentportError) return error;
  const { SQLiteError } = await import("bun:sqlite");
  if (error instanceof SQLiteError) return new AgentportError("ledger_damaged", error.message, { cause: error });
  return new AgentportError("internal", (error as Error)?.message ?? String(error), { cause: error });
}

/** The one line a failure is said in. */
function lineOf(error: AgentportError, thrown: unknown, argv: string[]): string {
  switch (error.kind) {
    case "ledger_unreachable":
      // The ledger went away mid-command (past its retries): the environment, never the agent.
      return `ledger: ${error.message}`;
    case "ledger_damaged":
      // SQLITE_CORRUPT, SQLITE_NOTADB, an I/O error: the machine's, not a crash.
      return `ledger: ${error.message.split("\n")[0]} (check it with agentport doctor; restore it from a backup or an export)`;
    case "internal":
      return internalError(thrown, argv);
    default:
      return error.message;
  }
}

async function failed(argv: string[], thrown: unknown): Promise<number> {
  const output = await import("./output.ts");
  const error = await asOwn(thrown);
  const message = lineOf(error, thrown, argv);
  const code = EXIT_OF_KIND[error.kind];
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const json = own.includes("--json");
  const jsonProgress = flagValue(own, "--progress") === "json";
  // Under --progress json stderr stays NDJSON, also when the arguments were refused before they were read.
  if (jsonProgress) output.setVerbosity({ progress: "json" });
  output.log.error(message);
  // An unrecorded verdict was printed already (one object per exit, never two); a failed stdout takes none.
  if (VERDICT_COMMANDS.has(argv[0] ?? "") && (json || jsonProgress) && !error.printed) {
    const { preflightVerdict } = await import("./verdict-output.ts");
    const { secrets } = await import("../core/redact.ts");
    const { safeJson } = await import("../core/text.ts");
    const { isAgentName } = await import("../core/agents.ts");
    const named = flagValue(own, "--agent");
    const agent = isAgentName(named) ? named : "claude";
    const verdict = secrets.verdict(error.verdict ?? preflightVerdict(agent, message.replace(/\n/g, "; "), code, error.faultKind));
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
