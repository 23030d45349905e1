// What the fake-pi bon suites share: a scratch repository, the binary run
// as `agentport bon`, per-phase scripts, the scripted prime, the ledger rows.
import { afterAll, beforeAll } from "bun:test";
import { Database } from "bun:sqlite";
import { chmodSync, mkdirSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Harvest } from "../src/bon/harvest.ts";
import { isRunning } from "../src/io/proc.ts";
import { BIN, tempDir } from "./helpers.ts";

export type Json = Record<string, any>;

/** Temporary folders, removed after the file's tests. */
export const made: string[] = [];
/** The fake pi: the binary through a symlink named `fake-pi`. */
export let fake: string;

/** Call at the top of a test file: the fake pi before its tests, the temporary folders removed after. */
export function useFakePi(): void {
  beforeAll(() => {
    const dir = realpathSync(tempDir("agentport-bon-bin-"));
    made.push(dir);
    fake = join(dir, "fake-pi");
    symlinkSync(BIN, fake);
  });
  afterAll(() => {
    if (process.env.AGENTPORT_KEEP_TMP) return;
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
}

export function sh(cwd: string, ...argv: string[]): string {
  const proc = Bun.spawnSync(argv, { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });
  if (proc.exitCode !== 0) throw new Error(`${argv.join(" ")}: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

export const git = (cwd: string, ...args: string[]) => sh(cwd, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", ...args);

export interface Box {
  root: string;
  repo: string;
  home: string;
  spec: string;
}

/** A repository with two committed files and an untracked spec under specs/. */
export function box(): Box {
  const root = realpathSync(tempDir("agentport-bon-"));
  made.push(root);
  const repo = join(root, "repo");
  mkdirSync(join(repo, "src"), { recursive: true });
  git(root, "init", "-q", "-b", "main", repo);
  writeFileSync(join(repo, "README.md"), "# demo\n");
  writeFileSync(join(repo, "src", "app.txt"), "app\n");
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "init");
  mkdirSync(join(repo, "specs"));
  writeFileSync(join(repo, "specs", "task.md"), "# Task\n\nWrite 42 to answer.txt.\n");
  return { root, repo, home: join(root, "home"), spec: "specs/task.md" };
}

export async function bon(b: Box, args: string[], env: Record<string, string> = {}, cwd = b.repo) {
  const proc = Bun.spawn([BIN, "bon", ...args], {
    cwd,
    env: {
      ...process.env,
      NO_COLOR: "1",
      AGENTPORT_HOME: b.home,
      AGENTPORT_GATEWAY: "",
      AGENTPORT_PI_BIN: fake,
      AGENTPORT_FAKE_PI_DIALECT: "0.73.1",
      ...env,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** A pi that plays one script per phase ($AGENTPORT_PHASE: prime, arm-k): one fake process per arm. */
export function perPhase(b: Box, turns: Record<string, unknown[]>): string {
  const scripts = join(b.root, "scripts");
  mkdirSync(scripts, { recursive: true });
  for (const [name, steps] of Object.entries(turns)) writeFileSync(join(scripts, `${name}.json`), JSON.stringify({ turns: [steps] }));
  const wrapper = join(scripts, "pi");
  // The fake beside the wrapper: an isolated arm sees the wrapper's folder, not the rest of /tmp.
  symlinkSync(BIN, join(scripts, "fake-pi"));
  writeFileSync(
    wrapper,
    `#!/bin/sh\nAGENTPORT_FAKE_SCENARIO="${scripts}/\${AGENTPORT_PHASE:-prime}.json" exec "${scripts}/fake-pi" "$@"\n`,
  );
  chmodSync(wrapper, 0o755);
  return wrapper;
}

export const statusLines = (repo: string) => git(repo, "status", "--porcelain", "--untracked-files=all").split("\n").filter(Boolean);

// -- the scripted batch -------------------------------------------------------------------

export const envelope = (summary: string, files: string[], usage?: Json) => ({
  envelope: { status: "success", summary, changed_files: files },
  ...(usage ? { usage } : {}),
});

export const PRIME = [
  {
    tool: { name: "read", args: { path: "specs/task.md" }, result: "# Task\n\nWrite 42 to answer.txt.\n" },
    usage: { input: 5000, output: 100 },
  },
  envelope("I will write 42 to answer.txt.", [], { input: 5200, output: 40 }),
];
export const MODEL = ["--model", "standin/standin-model", "--direct"];

export function readHarvest(stdout: string): Harvest {
  return JSON.parse(stdout) as Harvest;
}

export interface PhaseRow {
  session_id: string;
  name: string;
  kind: string;
  status: string;
  ok: number;
  tokens_in: number | null;
  tokens_out: number | null;
  tokens_cache_read: number | null;
  tokens_cache_write: number | null;
  cost_micro_usd: number | null;
  seconds: number | null;
  parent_id: string | null;
  agent_session_id: string | null;
  cwd: string;
}

export function ledgerRows(home: string, batchId: string): PhaseRow[] {
  const db = new Database(join(home, "ledger.sqlite"), { readonly: true });
  try {
    return db
      .query<PhaseRow, [string]>(
        `SELECT p.session_id, p.name, p.kind, p.status, p.ok, p.tokens_in, p.tokens_out, p.tokens_cache_read, p.tokens_cache_write, p.cost_micro_usd, p.seconds,
                s.parent_id, s.agent_session_id, s.cwd
         FROM phases p JOIN sessions s ON s.id = p.session_id WHERE p.run_id = ? ORDER BY p.id`,
      )
      .all(batchId);
  } finally {
    db.close();
  }
}

/** The processes whose working folder is under `dir`. */
export function processesIn(dir: string): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return readlinkSync(`/proc/${e}/cwd`).startsWith(dir) && isRunning(Number(e));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Wait up to `ms` until no process works under `dir`; what still does. */
export async function settledIn(dir: string, ms = 5_000): Promise<number[]> {
  const until = performance.now() + ms;
  while (processesIn(dir).length > 0 && performance.now() < until) await Bun.sleep(50);
  return processesIn(dir);
}
