// `agentport completion bash|zsh|fish`: a completion script made from the
// command definitions (names, flags, enum values, descriptions), so it cannot
// drift from the binary.
import { defineCommand, type ArgDef, type CommandDef } from "citty";
import { COMMANDS } from "../command-table.ts";
import { usageError } from "../errors.ts";
import { writeResult } from "../output.ts";
import { resolved } from "../help.ts";
import { completionScript, SHELLS, type Shell, type Spec } from "../completion-script.ts";

/** Every command's flags, as the scripts need them. */
async function specs(): Promise<Spec[]> {
  const out: Spec[] = [];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const cmd: CommandDef = await load();
    const meta = (await resolved(cmd.meta)) ?? {};
    const args = ((await resolved(cmd.args)) ?? {}) as Record<string, ArgDef>;
    const flags = Object.entries(args)
      .filter(([, d]) => d.type !== "positional")
      .map(([flag, d]) => ({
        name: flag,
        description: d.description ?? "",
        takesValue: d.type !== "boolean",
        values: d.type === "enum" ? (d.options ?? []) : [],
      }));
    out.push({ name, description: meta.description ?? "", flags });
  }
  return out;
}

export const completionCommand = defineCommand({
  meta: {
    name: "completion",
    description: "Print a shell completion script: bash, zsh or fish (source it, or save it where your shell looks)",
  },
  args: {
    shell: { type: "positional", required: true, description: `The shell: ${SHELLS.join(", ")}` },
  },
  async run({ args }) {
    if (!(SHELLS as readonly string[]).includes(args.shell))
      throw usageError(`completion: unknown shell "${args.shell}" (known: ${SHELLS.join(", ")})`);
    await writeResult(completionScript(args.shell as Shell, await specs()));
    return 0;
  },
});
