// `agentport help [COMMAND]`: the same text as `agentport COMMAND --help`.
import { defineCommand } from "citty";
import { COMMANDS } from "../command-table.ts";
import { usageError } from "../errors.ts";
import { helpOf } from "../help.ts";
import { writeResult } from "../output.ts";

export const helpCommand = defineCommand({
  meta: { name: "help", description: "Show a command's help (the same as agentport COMMAND --help), or the list of commands" },
  args: {
    command: { type: "positional", required: false, description: "The command" },
  },
  async run({ args }) {
    const name = args.command;
    if (name !== undefined && !Object.hasOwn(COMMANDS, name)) throw usageError(`unknown command "${name}": try agentport help`);
    await writeResult(await helpOf(name));
    return 0;
  },
});
