/**
 * bench-bon-opencode.ts — `agentport bon --agent opencode`: a 3-arm batch with
 * a process per session (one-shot: `opencode run`, the arms `run -s PRIME
 * --fork` or an imported copy) against the same batch on one `opencode serve`
 * (`--serve`: the arms forked over HTTP), one after the other and in parallel,
 * several rounds. The real opencode (test/peers) against the loopback
 * chat-completions stand-in: zero tokens, no network. Needs dist/agentport
 * (`bun run scripts/build.ts`).
 *
 * Run by hand (not part of the test suite):
 *   bun run scripts/bench-bon-opencode.ts [--rounds 3] [--modes one-shot,serve] [--parallel-only]
 *
 * Per batch: the arms' seconds (each from its session's start to its gate's
 * end: fork or copy, the turn, harvest, gate), the prime's, the batch's wall
 * time, and the server's start-up (the `listening … after X s` line).
 */
import { parseArgs } from "node:util";
import { removeTempDirs } from "../test/standins/util.ts";
import { peerOrSkip } from "../test/peers/peers.ts";
import { bonWorld, runBon } from "../test/standins/bon-opencode.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    modes: { type: "string", default: "one-shot,serve" },
    "parallel-only": { type: "boolean", default: false },
  },
});
const opencode = peerOrSkip("opencode");
if (opencode === null) throw new Error("the opencode peer is not installed (test/peers): npm install there first");
const rounds = Number(values.rounds);
const sessions = values.modes.split(",");
const layouts = values["parallel-only"] ? ["parallel"] : ["sequential", "parallel"];

interface Sample {
  arms: number[];
  prime: number;
  wall: number;
  serverStart: number | null;
}

const samples = new Map<string, Sample[]>();
for (let round = 1; round <= rounds; round++) {
  for (const layout of layouts) {
    for (const kind of sessions) {
      const label = `${kind} ${layout}`;
      const w = bonWorld(opencode);
      const flags = [...(kind === "serve" ? ["--serve"] : []), ...(layout === "parallel" ? ["--parallel"] : [])];
      const started = performance.now();
      const { code, harvest, stderr } = await runBon(w, flags);
      const wall = (performance.now() - started) / 1000;
      await w.standin.stop();
      if (harvest === null || code !== 0) throw new Error(`${label}: exit ${code}: ${stderr.slice(-400)}`);
      const start = /opencode serve listening on \S+ after ([\d.]+) s/.exec(stderr)?.[1];
      const sample = {
        arms: harvest.arms.map((a) => a.seconds ?? 0),
        prime: harvest.prime?.seconds ?? 0,
        wall,
        serverStart: start === undefined ? null : Number(start),
      };
      samples.set(label, [...(samples.get(label) ?? []), sample]);
      const mean = sample.arms.reduce((a, b) => a + b, 0) / sample.arms.length;
      console.log(
        `round ${round} ${label.padEnd(20)} arms ${sample.arms.map((s) => s.toFixed(1)).join(" / ")} s (mean ${mean.toFixed(1)}), prime ${sample.prime.toFixed(1)} s, batch ${wall.toFixed(1)} s${sample.serverStart === null ? "" : `, server up in ${sample.serverStart.toFixed(1)} s`}`,
      );
    }
  }
}
removeTempDirs();

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
console.log(`\nmedians over ${rounds} round(s) (3 arms each):`);
for (const [label, list] of samples) {
  const arms = list.flatMap((s) => s.arms);
  const starts = list.map((s) => s.serverStart).filter((s): s is number => s !== null);
  console.log(
    `  ${label.padEnd(20)} per arm ${median(arms).toFixed(1)} s (${Math.min(...arms).toFixed(1)}–${Math.max(...arms).toFixed(1)}), prime ${median(list.map((s) => s.prime)).toFixed(1)} s, batch ${median(list.map((s) => s.wall)).toFixed(1)} s${starts.length > 0 ? `, server start ${median(starts).toFixed(1)} s` : ""}`,
  );
}
