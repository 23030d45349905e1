// A separate process for the ledger's crash and concurrency tests.
//   bun test/ledger-worker.ts declare-then-hang <home>     declare a session, start a phase, print {"id","phase"}, sleep
//   bun test/ledger-worker.ts hammer <home> <count> <tag>  count × (declare, startPhase, finishPhase), print "done <count>"
// The ledger is $AGENTPORT_LEDGER when set (a postgres:// URL), else <home>/ledger.sqlite.
import { connectLedger } from "../src/io/ledger.ts";

const [mode, home, ...rest] = process.argv.slice(2);
if (!mode || !home) throw new Error("usage: ledger-worker.ts declare-then-hang|hammer <home> ...");

async function declareThenHang(home: string): Promise<void> {
  const ledger = await connectLedger(home, process.env.AGENTPORT_LEDGER);
  const session = await ledger.declareSession({ agent: "pi", cwd: process.cwd() });
  const phase = await ledger.startPhase({ sessionId: session.id, kind: "run" });
  console.log(JSON.stringify({ id: session.id, phase: phase.id }));
  // Keep the connection open, as a runner waiting on its agent would, until killed.
  setInterval(() => {}, 1 << 30);
}

async function hammer(home: string, count: number, tag: string): Promise<void> {
  await using ledger = await connectLedger(home, process.env.AGENTPORT_LEDGER);
  for (let i = 0; i < count; i++) {
    const session = await ledger.declareSession({ id: `${tag}-${i}`, agent: "claude", cwd: process.cwd(), env: {} });
    const phase = await ledger.startPhase({ sessionId: session.id, kind: "run" });
    await ledger.finishPhase(phase.id, {
      status: "completed",
      ok: true,
      tokens: { input: 1, output: 2, cache_read: 0, cache_write: 0 },
      costMicroUsd: 10,
      seconds: 0.01,
      stopReason: "end_turn",
      failure: null,
    });
  }
  console.log(`done ${count}`);
}

switch (mode) {
  case "declare-then-hang":
    await declareThenHang(home);
    break;
  case "hammer":
    await hammer(home, Number(rest[0] ?? 100), rest[1] ?? String(process.pid));
    break;
  default:
    throw new Error(`unknown mode ${mode}`);
}
