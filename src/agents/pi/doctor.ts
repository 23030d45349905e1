// pi at zero tokens: its probed dialect, and `pi --mode rpc` answering
// get_state with no prompt, no session and no key.
import { PI_FLAGS, sessionNaming } from "../../core/pi/capabilities.ts";
import type { Ledger } from "../../io/ledger.ts";
import type { Finding } from "../adapter.ts";
import { probePi } from "./probe.ts";

const RPC_TIMEOUT_MS = 15_000;

async function piRpcAnswers(bin: string): Promise<string> {
  const proc = Bun.spawn([bin, "--mode", "rpc", "--no-session"], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    env: { ...process.env, PI_OFFLINE: "1" },
    timeout: RPC_TIMEOUT_MS,
    killSignal: "SIGKILL",
  });
  proc.stdin.write(`${JSON.stringify({ id: "doctor-1", type: "get_state" })}\n`);
  await proc.stdin.flush();
  const reader = proc.stdout.getReader();
  let text = "";
  try {
    while (!text.includes("\n")) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
  } finally {
    reader.releaseLock();
    await proc.stdin.end();
    proc.kill("SIGTERM");
    await proc.exited;
  }
  const response = JSON.parse(text.split("\n")[0] ?? "null") as { id?: string; success?: boolean; data?: { sessionId?: string } } | null;
  if (response?.id !== "doctor-1" || response.success !== true) throw new Error(`unexpected answer: ${text.slice(0, 120)}`);
  return `get_state answered (session ${response.data?.sessionId ?? "?"})`;
}

export async function probePiFindings(bin: string, ledger: Ledger | null): Promise<Finding[]> {
  if (ledger === null) return [];
  try {
    const caps = await probePi(bin, ledger, process.env);
    const flags = PI_FLAGS.filter((f) => caps.flags[f]);
    const findings: Finding[] = [
      {
        check: "pi",
        ok: true,
        version: caps.version,
        detail: `${bin}: pi ${caps.version}, sessions named by ${sessionNaming(caps)}; flags: ${flags.join(" ")}`,
      },
    ];
    try {
      findings.push({ check: "pi rpc", ok: true, detail: await piRpcAnswers(bin) });
    } catch (error) {
      findings.push({
        check: "pi rpc",
        ok: false,
        detail: (error as Error).message,
        fix: "run `pi --mode rpc` by hand and look at its stderr",
      });
    }
    return findings;
  } catch (error) {
    return [
      {
        check: "pi",
        ok: false,
        detail: `${bin}: ${(error as Error).message}`,
        fix: "check that this binary is pi (`pi --version` prints its version on stderr)",
      },
    ];
  }
}
