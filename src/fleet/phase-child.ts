// A resume attempt's phase: `agentport resume ID --json --progress json` in
// the session's birth folder, a child process watched by this worker's keeper.
// Resumes stay a child: `resume` is one command from its pre-flight (the
// session found, the birth-place and busy-session refusals, each printed as a
// verdict by main) to its run, reading the process's own interrupt signal; a
// new phase (phase.ts) runs in the worker's process.
import { keeper } from "../io/keeper.ts";
import { processStart } from "../io/proc.ts";
import { CANCEL_SIGNAL } from "../cli/interrupt.ts";
import { runDirOf } from "./checkout.ts";
import { watchProgress } from "./progress.ts";
import { runFlags, type Phase, type PhaseInput } from "./phase.ts";

export function childPhase(p: PhaseInput, session: string): Phase {
  const argv = [
    ...p.self,
    "resume",
    session,
    "--json",
    "--progress",
    "json",
    "--home",
    p.home,
    "--ledger",
    p.ledger,
    ...runFlags(p.task.request, true),
    "--prompt",
    p.task.prompt,
  ];
  // The keeper first (its own start takes ms): a kill -9 between the spawn and the watch would leave the run unwatched.
  const guard = keeper();
  const child = Bun.spawn(argv, { cwd: p.workspace, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  guard?.watch({ pid: child.pid, start: processStart(child.pid) ?? "" });
  const ended = Promise.all([new Response(child.stdout).text(), watchProgress(child.stderr, p.onCost), child.exited]).then(
    ([stdout, lastWord, code]) => {
      guard?.done(child.pid);
      let verdict: unknown;
      try {
        verdict = JSON.parse(stdout);
      } catch {
        verdict = { error: { kind: "no_verdict", message: lastWord } };
      }
      return { verdict, code, lastWord, runDir: runDirOf(p.home, (verdict as { session_id?: unknown }).session_id) };
    },
  );
  return { ended, stop: (how) => child.kill(how === "cancel" ? CANCEL_SIGNAL : "SIGTERM") };
}
