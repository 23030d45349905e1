// The fleet queue's test fixture: a fresh PostgreSQL database, a local bare
// repository, the fake claude (its own log: one line per agent start, with
// its workspace as cwd), hosts simulated by separate homes and machine ids.
import { afterAll, expect } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MACHINE_ID_FILE } from "../src/io/host.ts";
import { BIN, agentport, tempDir } from "./helpers.ts";
import { postgres } from "./pg.ts";

// 3 s: renewed every 500 ms, a grace of 2.5 s, which a loaded 2-core box keeps.
export const LEASE_MS = "3000";
const children: Bun.Subprocess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

export interface Fleet {
  root: string;
  url: string;
  repo: string;
  log: string;
  env: Record<string, string>;
}

export async function fleet(steps: unknown[], url?: string): Promise<Fleet> {
  url ??= await (await postgres()).fresh();
  const root = tempDir("agentport-fleet-q-");
  const src = join(root, "src");
  mkdirSync(src);
  writeFileSync(join(src, "README"), "hello\n");
  const git = (args: string[], cwd = src) =>
    expect(Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd }).exitCode).toBe(0);
  git(["init", "-q", "-b", "main"]);
  git(["add", "."]);
  git(["commit", "-qm", "one"]);
  git(["clone", "-q", "--bare", src, join(root, "repo.git")], root);
  mkdirSync(join(root, "bin"));
  symlinkSync(BIN, join(root, "bin", "fake-claude"));
  const log = join(root, "agents.log");
  const env = {
    AGENTPORT_LEDGER: url,
    AGENTPORT_CLAUDE_BIN: join(root, "bin", "fake-claude"),
    AGENTPORT_FAKE_LOG: log,
    AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps: [...steps, { text: "done" }, { result: {} }] }),
    AGENTPORT_LEASE_MS: LEASE_MS,
    AGENTPORT_CONFIG: "",
    HOME: join(root, "home"),
  };
  return { root, url, repo: `file://${join(root, "repo.git")}`, log, env };
}

/** A host: its own home and machine id. */
export function host(f: Fleet, name: string): Record<string, string> {
  const home = join(f.root, name);
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, MACHINE_ID_FILE), `${name}-machine\n`);
  return { ...f.env, AGENTPORT_HOME: home };
}

export function worker(f: Fleet, env: Record<string, string>, args: string[] = []): Bun.Subprocess<"ignore", "pipe", "pipe"> {
  const child = Bun.spawn([BIN, "worker", ...args], {
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  children.push(child);
  return child;
}

export async function submit(f: Fleet, args: string[]): Promise<string> {
  const done = await agentport(["submit", "--repo", f.repo, ...args], { env: f.env });
  expect(done.stderr).toBe("");
  expect(done.code).toBe(0);
  return done.stdout.trim();
}

/** The agents' starts, by task id and attempt (from their workspace, <id>-<attempt>), and the host (home) whose worker ran each. */
export function agentRuns(f: Fleet): { task: string; attempt: number; session: string; host: string }[] {
  if (!existsSync(f.log)) return [];
  return readFileSync(f.log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { argv: string[]; cwd: string })
    .filter((r) => !r.argv.includes("--version") && !r.argv.includes("--help"))
    .map((r) => {
      const m = /\/([0-9a-f-]{36})-(\d+)$/.exec(r.cwd);
      if (m === null) throw new Error(`an agent ran outside a task's workspace: ${r.cwd}`);
      const host = r.cwd.slice(f.root.length + 1).split("/")[0]!;
      return { task: m[1]!, attempt: Number(m[2]), session: r.argv[r.argv.indexOf("--session-id") + 1] ?? "", host };
    });
}

/** The fake agents of this fleet still alive (their argv[0] is under its root), or only the one that runs `session`. */
export function liveAgents(f: Fleet, session?: string): number[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const argv = readFileSync(`/proc/${p}/cmdline`, "utf8");
        return argv.startsWith(join(f.root, "bin")) && (session === undefined || argv.includes(session));
      } catch {
        return false;
      }
    })
    .map(Number);
}

export async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = performance.now() + ms;
  while (!(await ok())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

export const task = async (f: Fleet, id: string) => JSON.parse((await agentport(["task", id, "--json"], { env: f.env })).stdout);
export const lines = (out: string) => out.trim().split("\n").filter(Boolean);
