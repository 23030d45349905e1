// The commands, by name: each loaded only when it is run (or its help shown),
// so `--version` and a fake agent's start pay for none of them.
import type { CommandDef } from "citty";

export const COMMANDS: Record<string, () => Promise<CommandDef>> = {
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
  schema: () => import("./commands/schema.ts").then((m) => m.schemaCommand as CommandDef),
  prices: () => import("./commands/prices.ts").then((m) => m.pricesCommand as CommandDef),
  help: () => import("./commands/help.ts").then((m) => m.helpCommand as CommandDef),
  completion: () => import("./commands/completion.ts").then((m) => m.completionCommand as CommandDef),
};
