// opencode's session commands a batch needs besides `run`: `export ID` (the
// session as one JSON document on stdout) and `import FILE` (a session from
// such a document, in the folder it names). Each runs in its own process
// group, watched by the keeper, bounded in time, and reaped.
import { AgentProcess } from "../../io/agent-process.ts";

export class OpencodeCommandError extends Error {}

const COMMAND_TIMEOUT_MS = 120_000;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

async function opencodeCommand(
  bin: string,
  args: string[],
  cwd: string,
  env: Record<string, string | undefined>,
  onPid?: (pid: number, running: boolean) => void,
): Promise<string> {
  const agent = AgentProcess.spawn({ argv: [bin, ...args], cwd, env, stdin: "ignore", stderrFile: "/dev/null", bunStdout: true });
  onPid?.(agent.pid, true);
  const timer = setTimeout(() => void agent.stop("timeout"), COMMAND_TIMEOUT_MS);
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    for (let chunk = await agent.stdout.read(); chunk !== null && bytes <= MAX_OUTPUT_BYTES; chunk = await agent.stdout.read()) {
      bytes += chunk.length;
      chunks.push(chunk.slice());
    }
  } finally {
    clearTimeout(timer);
    agent.stdout.release();
    // Whatever it left, in its group or not, goes with it.
    if (bytes > MAX_OUTPUT_BYTES) await agent.abandon();
    else await agent.finish();
    onPid?.(agent.pid, false);
  }
  if (bytes > MAX_OUTPUT_BYTES) throw new OpencodeCommandError(`opencode ${args[0]}: more than ${MAX_OUTPUT_BYTES} bytes of output`);
  const code = await agent.exited;
  const err = agent.stderrTail().trim();
  if (code !== 0) throw new OpencodeCommandError(`opencode ${args[0]}: exit ${code}${err ? `: ${err.split("\n").slice(-1)[0]}` : ""}`);
  return Buffer.concat(chunks).toString("utf8");
}

/** The session as `opencode export` prints it (a JSON document; its first line on stderr says what it exports). */
export function exportSession(
  bin: string,
  id: string,
  cwd: string,
  env: Record<string, string | undefined>,
  onPid?: (pid: number, running: boolean) => void,
): Promise<string> {
  return opencodeCommand(bin, ["export", id], cwd, env, onPid);
}

/** `opencode import FILE`: the session the document holds, with its id and folder. */
export async function importSession(
  bin: string,
  file: string,
  cwd: string,
  env: Record<string, string | undefined>,
  onPid?: (pid: number, running: boolean) => void,
): Promise<void> {
  await opencodeCommand(bin, ["import", file], cwd, env, onPid);
}
