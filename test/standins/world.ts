// One end-to-end world for an agent CLI driven through the compiled binary
// against its loopback stand-in: a project folder (with agentport.json, so
// the folder is one the user configured and trusts), a private HOME and state
// folder, the agent's offline environment, and a look at what is left running.
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema, type Verdict } from "../../src/core/verdict.ts";
import { BIN } from "../helpers.ts";
import { spawnCollect, tempDir, type Spawned, type Standin } from "./util.ts";

export interface World {
  dir: string;
  project: string;
  home: string;
  env: Record<string, string>;
  standin: Standin;
}

export function makeWorld(
  prefix: string,
  standin: Standin,
  agentEnv: (dir: string, url: string) => Record<string, string>,
  extra: Record<string, string>,
): World {
  const dir = tempDir(prefix);
  const project = join(dir, "project");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "notes.txt"), "line one\nline two\n");
  writeFileSync(join(project, "agentport.json"), "{}\n");
  const home = join(dir, "agentport");
  // Named by $AGENTPORT_CONFIG, the config is the user's choice: trusted, so gemini gets --skip-trust.
  return {
    dir,
    project,
    home,
    standin,
    env: { ...agentEnv(dir, standin.url), AGENTPORT_HOME: home, AGENTPORT_CONFIG: join(project, "agentport.json"), ...extra },
  };
}

/** The commands whose JSON on stdout is a verdict (show, sessions and the others print other shapes). */
const VERDICT_COMMANDS = new Set(["run", "resume", "replay"]);

/** The compiled agentport in a world's project folder with its environment; the verdict parsed when the command prints one. */
export async function agentport(
  w: Pick<World, "project" | "env">,
  args: string[],
  opts: { cwd?: string; stdin?: string; timeoutMs?: number } = {},
): Promise<Spawned & { verdict: Verdict | null }> {
  const ran = await spawnCollect([BIN, ...args], {
    cwd: opts.cwd ?? w.project,
    env: w.env,
    stdin: opts.stdin,
    timeoutMs: opts.timeoutMs ?? 80_000,
  });
  const verdict =
    VERDICT_COMMANDS.has(args[0] ?? "") && ran.stdout.trim().startsWith("{") ? VerdictSchema.parse(JSON.parse(ran.stdout)) : null;
  return { ...ran, verdict };
}

/** Processes whose working folder is under `dir`, with their command lines: what a run left behind. */
export function processesIn(dir: string): string[] {
  const left: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readlinkSync(`/proc/${entry}/cwd`).startsWith(dir)) continue;
      left.push(`${entry} ${readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ").trim()}`);
    } catch {
      // Gone, or not ours to read.
    }
  }
  return left;
}

/** What is still left after the kernel had up to `ms` to deliver the kills. */
export async function leftAfter(dir: string, ms = 3_000): Promise<string[]> {
  const until = performance.now() + ms;
  let left = processesIn(dir);
  while (left.length > 0 && performance.now() < until) {
    await Bun.sleep(100);
    left = processesIn(dir);
  }
  return left;
}
