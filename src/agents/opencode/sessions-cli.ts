// opencode's session commands a batch needs besides `run`: `export ID` (the
// session as one JSON document on stdout) and `import FILE` (a session from
// such a document, in the folder it names). Each runs in its own process
// group, watched by the keeper, bounded in time, and reaped.
import { reapAgent, spawnAgent } from "../../io/spawn.ts";

export class OpencodeCommandError extends Error {}

const COMMAND_TIMEOUT_MS = 120_000;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

async function opencodeCommand(bin: string, args: string[], cwd: string, env: Record<string, string | undefined>, onPid?: (pid: number, running: boolean) => void): Promise<string> {
  const { child, agent } = spawnAgent([bin, ...args], { cwd, env, stdin: "ignore" });
  onPid?.(child.pid, true);
  const timer = setTimeout(() => reapAgent(agent), COMMAND_TIMEOUT_MS);
  try {
    const [out, err, code] = await Promise.all([new Response(child.stdout).arrayBuffer(), new Response(child.stderr).text(), child.exited]);
    if (out.byteLength > MAX_OUTPUT_BYTES) throw new OpencodeCommandError(`opencode ${args[0]}: more than ${MAX_OUTPUT_BYTES} bytes of output`);
    if (code !== 0) throw new OpencodeCommandError(`opencode ${args[0]}: exit ${code}${err.trim() ? `: ${err.trim().split("\n").slice(-1)[0]}` : ""}`);
    return new TextDecoder().decode(out);
  } finally {
    clearTimeout(timer);
    reapAgent(agent);
    onPid?.(child.pid, false);
  }
}

/** The session as `opencode export` prints it (a JSON document; its first line on stderr says what it exports). */
export function exportSession(bin: string, id: string, cwd: string, env: Record<string, string | undefined>, onPid?: (pid: number, running: boolean) => void): Promise<string> {
  return opencodeCommand(bin, ["export", id], cwd, env, onPid);
}

/** `opencode import FILE`: the session the document holds, with its id and folder. */
export async function importSession(bin: string, file: string, cwd: string, env: Record<string, string | undefined>, onPid?: (pid: number, running: boolean) => void): Promise<void> {
  await opencodeCommand(bin, ["import", file], cwd, env, onPid);
}
