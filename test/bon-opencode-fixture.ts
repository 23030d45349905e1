// What the bon suites with the real opencode share (test/bon-opencode*.test.ts, one file per
// shape so the two test workers share them): the world, the checks of a finished batch, a
// batch whose arms hang. The opencode 1.18.33 peer against the loopback chat-completions
// stand-in (its script: ./standins/bon-opencode.ts): no key, no network.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { totalTokens, type Harvest } from "../src/bon/harvest.ts";
import { peerOrSkip } from "./peers/peers.ts";
import {
  bonArgv,
  bonWorld,
  messageText as text,
  PRIME_SUMMARY,
  runBon,
  type ArmCommand,
  type BonWorld as World,
} from "./standins/bon-opencode.ts";
import { isTitleRequest } from "./standins/opencode.ts";
import { git } from "./standins/spec-repo.ts";
import { removeTempDirs, type Standin } from "./standins/util.ts";
import { leftAfter } from "./standins/world.ts";

type Json = Record<string, any>;

export const OPENCODE = peerOrSkip("opencode");
const standins: Standin[] = [];
/** Register in each file: its worlds' stand-ins stopped and folders removed after its tests. */
export function stopWorldsAfterAll(): void {
  afterAll(async () => {
    for (const s of standins) await s.stop();
    removeTempDirs();
  });
}

export function world(armCommand?: ArmCommand): World {
  const w = bonWorld(OPENCODE ?? "", armCommand);
  standins.push(w.standin);
  return w;
}

export async function expectBatch(w: World, h: Harvest) {
  expect(h.agent).toBe("opencode");
  // The user's checkout as found: only the untracked spec.
  expect(git(w.repo, "status", "--porcelain", "--untracked-files=all")).toBe("?? specs/task.md\n");
  expect(existsSync(join(w.repo, "answer.txt"))).toBe(false);
  expect(existsSync(join(h.run_dir, "harvest.json"))).toBe(true);
  expect(h.prime).toMatchObject({ ok: true, status: "completed", summary: PRIME_SUMMARY });
  expect(h.prime!.agent_session_id).toStartWith("ses_");
  const wrote = (a: Harvest["arms"][number]) => readFileSync(a.patch!, "utf8").match(/^\+(4[12])$/m)?.[1];
  expect(h.arms.map(wrote).sort()).toEqual(["41", "42", "42"]);
  for (const a of h.arms) {
    expect(a.agent_session_id).toStartWith("ses_");
    expect(a.agent_session_id).not.toBe(h.prime!.agent_session_id);
    if (wrote(a) === "42") expect(a).toMatchObject({ verdict: "green", reason: "" });
    else expect(a).toMatchObject({ verdict: "red", reason: "gate `grep -qx 42 answer.txt` exited 1" });
    expect(totalTokens(a.tokens)!).toBeGreaterThan(0);
    expect(a.cost_micro_usd!).toBeGreaterThan(0);
  }
  const winner = h.arms.find((a) => a.arm === h.winner?.arm)!;
  expect(winner.verdict).toBe("green");
  git(w.repo, "apply", "--check", "--index", winner.patch!);
  // Every arm's first request carried the prime's reading: it started from the prime.
  const armFirsts = w.standin.requests.filter(
    (r) => !isTitleRequest(r) && text((r.messages as Json[]).at(-1)?.content).includes("now implement the spec"),
  );
  expect(armFirsts.length).toBe(3);
  for (const r of armFirsts) expect(JSON.stringify(r.messages)).toContain(PRIME_SUMMARY);
  // The ledger: opencode sessions, each arm's parent the prime, each bound to its ses_ id.
  const db = new Database(join(w.home, "ledger.sqlite"), { readonly: true });
  const rows = db
    .query<Json, [string]>(
      "SELECT p.name, p.ok, p.tokens_in, p.cost_micro_usd, s.id, s.agent, s.parent_id, s.agent_session_id FROM phases p JOIN sessions s ON s.id = p.session_id WHERE p.run_id = ? AND p.kind != 'workspace'",
    )
    .all(h.batch_id);
  db.close();
  expect(rows.map((r) => r.name).sort()).toEqual(["arm-1", "arm-2", "arm-3", "check", "harvest", "prime"]);
  for (const r of rows) expect(r.agent).toBe("opencode");
  expect(rows.find((r) => r.name === "prime")).toMatchObject({
    id: h.prime!.session_id,
    parent_id: null,
    agent_session_id: h.prime!.agent_session_id,
  });
  for (const a of h.arms) {
    expect(rows.find((r) => r.name === `arm-${a.arm}`)).toMatchObject({
      id: a.session_id,
      parent_id: h.prime!.session_id,
      agent_session_id: a.agent_session_id,
      ok: a.verdict === "green" ? 1 : 0,
      tokens_in: a.tokens!.input,
      cost_micro_usd: a.cost_micro_usd,
    });
  }
  // Nothing left running, no workspace left, no worktree in the user's repository.
  expect(await leftAfter(w.dir)).toEqual([]);
  expect(existsSync(join(h.run_dir, "workspaces"))).toBe(false);
  // A copy of the prime for `opencode import` (unredacted) is not kept once imported.
  expect(readdirSync(h.run_dir).filter((f) => f.endsWith(".session.json"))).toEqual([]);
  expect(git(w.repo, "worktree", "list").trim().split("\n").length).toBe(1);
}

/** Each session's folder, as opencode's own database has it. */
export function sessionFolders(w: World): Map<string, string> {
  const listed = Bun.spawnSync([OPENCODE!, "session", "list", "--format", "json"], {
    cwd: w.repo,
    env: w.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  return new Map((JSON.parse(listed.stdout.toString()) as Json[]).map((s) => [s.id as string, s.directory as string]));
}

export const BATCHES = [
  {
    name: "one-shot, one after the other in one workspace: each arm `run -s PRIME --fork`",
    flags: [],
    mode: "sequential",
    sessions: "one-shot",
  },
  {
    name: "one-shot, in parallel: arm 1 forks in the prime's workspace, arms 2 and 3 run an imported copy in their own",
    flags: ["--parallel"],
    mode: "parallel",
    sessions: "one-shot",
  },
  {
    name: "one server, one after the other: the prime a session of `opencode serve`, each arm a fork of it",
    flags: ["--serve"],
    mode: "sequential",
    sessions: "server",
  },
  {
    name: "one server, in parallel: arms forked from the prime at once, moved into their own workspaces",
    flags: ["--serve", "--parallel"],
    mode: "parallel",
    sessions: "server",
  },
] as const;

/** The test of one batch: run, every check of expectBatch, each session in the folder it worked in. */
export function batchTest(b: (typeof BATCHES)[number]): void {
  test(b.name, async () => {
    const w = world();
    const { code, harvest, stderr } = await runBon(w, [...b.flags]);
    if (harvest === null) throw new Error(`no harvest (exit ${code}): ${stderr}`);
    expect(code).toBe(0);
    expect(harvest).toMatchObject({ mode: b.mode, sessions: b.sessions });
    if (b.sessions === "server") expect(stderr).toContain("bon: opencode serve listening on http://127.0.0.1:");
    await expectBatch(w, harvest);
    // Each session belongs to the folder it worked in: the arms' tools ran in their own workspaces.
    const folders = sessionFolders(w);
    expect(folders.get(harvest.prime!.agent_session_id!)).toBe(harvest.arms.find((a) => a.arm === 1)!.cwd);
    for (const a of harvest.arms) expect(folders.get(a.agent_session_id!)).toBe(a.cwd);
    if (b.mode === "parallel") expect(new Set(harvest.arms.map((a) => a.cwd)).size).toBe(3);
  }, 300_000);
}

/** A batch whose three arms are each in a bash tool that outlives any patience, once all three have started. */
export async function hangingArms(flags: string[]) {
  const w = world(() => "touch arm-started; sleep 300");
  const proc = Bun.spawn(bonArgv(flags), { cwd: w.repo, env: w.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const runs = join(w.home, "runs");
  const started = () =>
    existsSync(runs) ? readdirSync(runs, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith("arm-started")).length : 0;
  const until = performance.now() + 200_000;
  while (started() < 3) {
    if (performance.now() > until || proc.exitCode !== null)
      throw new Error(`the arms never started: ${await new Response(proc.stderr).text()}`);
    await Bun.sleep(200);
  }
  return { w, proc };
}
