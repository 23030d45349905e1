// `agentport acp`: agentport as an ACP agent on its stdin and stdout, so an
// editor or an orchestrator that speaks ACP drives supervised, ledger-declared
// sessions of any agent agentport runs. stdout carries protocol messages only
// (each through the redactor); everything human goes to stderr. No ACP SDK:
// the messages are framed by the project's bounded LF framer, as the client is.
import { isUtf8 } from "node:buffer";
import { defineCommand } from "citty";
import { AcpServer } from "../../core/acp/server.ts";
import { LineFramer } from "../../core/frame.ts";
import type { Json } from "../../core/record.ts";
import { secrets } from "../../core/redact.ts";
import { AGENT_NAMES, adapterOf, agentBinary } from "../../agents/table.ts";
import { AgentportHost } from "../../acp-server/host.ts";
import { stdinSource } from "../../io/pipe.ts";
import { VERSION } from "../../version.ts";
import { agentArgs, agentSetup, openLedger, projectConfig, rosterArgs, setupLedger } from "../agent-options.ts";
import { writeFd } from "../fd-out.ts";
import { usageError } from "../errors.ts";
import { commandLine } from "../flags.ts";
import { interruptSignal } from "../interrupt.ts";
import { log, setVerbosity } from "../output.ts";

export const acpCommand = defineCommand({
  meta: {
    name: "acp",
    description:
      "Speak the Agent Client Protocol on stdin/stdout as an agent: each ACP session is an agentport session of --agent (declared in the ledger, the client's cwd its birth folder), each prompt a supervised run whose verdict ends the turn; arguments after -- go to the agent verbatim",
  },
  args: {
    agent: {
      type: "enum",
      options: [...AGENT_NAMES],
      description: "Which agent each new session runs (default: the named agent's, else claude)",
    },
    ...rosterArgs,
    ...agentArgs,
  },
  async run({ args, rawArgs }) {
    setVerbosity(args);
    const line = commandLine(args, rawArgs);
    if (line.words.length > 0)
      throw usageError(`agentport acp takes no prompt (${JSON.stringify(line.words[0])}): the client sends its prompts over ACP`);
    if (typeof args.cwd === "string")
      throw usageError("agentport acp: --cwd is not taken; each session's folder is the cwd its client gives in session/new");
    // Every flag checked here, before a word is spoken: a bad one is exit 2, as for run.
    const cwd = process.cwd();
    const setup = agentSetup({ flags: line.flags, passThrough: line.passThrough }, cwd, {
      useDefault: true,
      config: await projectConfig(args, cwd),
    });
    agentBinary(adapterOf(setup.agent), setup.args);
    await using ledger = await openLedger(setupLedger(setup));
    let clientGone = false;
    const write = (message: Json) => {
      if (clientGone) return;
      const error = writeFd(1, `${secrets.values(JSON.stringify(message))}\n`);
      if (error !== null) clientGone = true;
    };
    const server = new AcpServer(
      new AgentportHost({ flags: line.flags, passThrough: line.passThrough, ledger }),
      { name: "agentport", version: VERSION },
      write,
    );
    const interrupted = interruptSignal();
    interrupted.addEventListener("abort", () => server.cancelAll(), { once: true });
    log.info(`acp: serving ${setup.agent} sessions on stdin/stdout (ledger ${ledger.path})`);
    const framer = new LineFramer(server, setup.common.maxLineBytes, { isUtf8 });
    const input = stdinSource();
    const stop = new Promise<null>((resolve) => interrupted.addEventListener("abort", () => resolve(null), { once: true }));
    for (;;) {
      const next = await Promise.race([input.read(), stop]);
      if (next === null || clientGone) break;
      framer.push(next);
    }
    input.cancel();
    if (!interrupted.aborted) framer.end();
    // The client is gone (or Ctrl-C): no run goes on spending for nobody.
    server.cancelAll();
    await server.settled();
    return interrupted.aborted ? 130 : 0;
  },
});
