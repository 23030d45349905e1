// pi's argument parser (0.73.1's dist/cli/args.js, plus the 0.85 flags).
import { THINKING_LEVELS, type PiDialect } from "./dialect.ts";

export type Diagnostic = { type: "error" | "warning"; message: string };
export interface PiArgs {
  messages: string[];
  fileArgs: string[];
  /** Unknown long flags, as pi holds them for extensions before rejecting them. */
  unknownFlags: Map<string, string | true>;
  diagnostics: Diagnostic[];
  help: boolean;
  version: boolean;
  mode?: "text" | "json" | "rpc";
  print: boolean;
  continue: boolean;
  resume: boolean;
  provider?: string;
  model?: string;
  noSession: boolean;
  session?: string;
  fork?: string;
  sessionDir?: string;
  noTools: boolean;
  noBuiltinTools: boolean;
  tools?: string[];
  thinking?: string;
  extensions: string[];
  listModels?: string | true;
  export?: string;
  /** 0.85 only. */
  sessionId?: string;
  approve: boolean;
}

/** pi 0.73.1's parseArgs (dist/cli/args.js), plus the three 0.85 flags when that dialect speaks. */
export function parsePiArgs(args: string[], dialect: PiDialect): PiArgs {
  const r: PiArgs = {
    messages: [],
    fileArgs: [],
    unknownFlags: new Map(),
    diagnostics: [],
    help: false,
    version: false,
    print: false,
    continue: false,
    resume: false,
    noSession: false,
    noTools: false,
    noBuiltinTools: false,
    extensions: [],
    approve: false,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    const hasValue = i + 1 < args.length;
    const value = () => args[++i] ?? "";
    if (dialect === "0.85" && arg === "--") {
      r.messages.push(...args.slice(i + 1));
      break;
    } else if (dialect === "0.85" && arg === "--session-id" && hasValue) r.sessionId = value();
    else if (dialect === "0.85" && arg === "--approve") r.approve = true;
    else if (arg === "--help" || arg === "-h") r.help = true;
    else if (arg === "--version" || arg === "-v") r.version = true;
    else if (arg === "--mode" && hasValue) {
      const mode = value();
      if (mode === "text" || mode === "json" || mode === "rpc") r.mode = mode;
    } else if (arg === "--continue" || arg === "-c") r.continue = true;
    else if (arg === "--resume" || arg === "-r") r.resume = true;
    else if (arg === "--provider" && hasValue) r.provider = value();
    else if (arg === "--model" && hasValue) r.model = value();
    else if ((arg === "--api-key" || arg === "--system-prompt" || arg === "--append-system-prompt" || arg === "--models") && hasValue)
      value();
    else if (arg === "--no-session") r.noSession = true;
    else if (arg === "--session" && hasValue) r.session = value();
    else if (arg === "--fork" && hasValue) r.fork = value();
    else if (arg === "--session-dir" && hasValue) r.sessionDir = value();
    else if (arg === "--no-tools" || arg === "-nt") r.noTools = true;
    else if (arg === "--no-builtin-tools" || arg === "-nbt") r.noBuiltinTools = true;
    else if ((arg === "--tools" || arg === "-t") && hasValue)
      r.tools = value()
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
    else if (arg === "--thinking" && hasValue) {
      const level = value();
      if (THINKING_LEVELS.includes(level)) r.thinking = level;
      else
        r.diagnostics.push({ type: "warning", message: `Invalid thinking level "${level}". Valid values: ${THINKING_LEVELS.join(", ")}` });
    } else if (arg === "--print" || arg === "-p") {
      r.print = true;
      const next = args[i + 1];
      if (next !== undefined && !next.startsWith("@") && (!next.startsWith("-") || next.startsWith("---"))) {
        r.messages.push(next);
        i++;
      }
    } else if (arg === "--export" && hasValue) r.export = value();
    else if ((arg === "--extension" || arg === "-e") && hasValue) r.extensions.push(value());
    else if ((arg === "--skill" || arg === "--prompt-template" || arg === "--theme") && hasValue) value();
    else if (
      [
        "--no-extensions",
        "-ne",
        "--no-skills",
        "-ns",
        "--no-prompt-templates",
        "-np",
        "--no-themes",
        "--no-context-files",
        "-nc",
        "--verbose",
        "--offline",
      ].includes(arg)
    )
      continue;
    else if (arg === "--list-models") {
      const next = args[i + 1];
      r.listModels = next !== undefined && !next.startsWith("-") && !next.startsWith("@") ? value() : true;
    } else if (arg.startsWith("@")) r.fileArgs.push(arg.slice(1));
    else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      if (eq !== -1) r.unknownFlags.set(arg.slice(2, eq), arg.slice(eq + 1));
      else {
        const next = args[i + 1];
        if (next !== undefined && !next.startsWith("-") && !next.startsWith("@")) {
          r.unknownFlags.set(arg.slice(2), next);
          i++;
        } else r.unknownFlags.set(arg.slice(2), true);
      }
    } else if (arg.startsWith("-")) r.diagnostics.push({ type: "error", message: `Unknown option: ${arg}` });
    else r.messages.push(arg);
  }
  return r;
}

/** `--scenario X` is the fake's own flag: pi never sees it. */
export function withoutScenarioFlag(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--scenario") i++;
    else out.push(argv[i] ?? "");
  }
  return out;
}
