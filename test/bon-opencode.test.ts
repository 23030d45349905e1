// `agentport bon --agent opencode` with the real opencode 1.18.33 (the peer)
// against the loopback chat-completions stand-in: no key, no network. The
// stand-in plays the model: the prime reads the spec with opencode's bash tool
// and ends with an envelope (a fenced JSON block) naming no file; each arm
// writes `answer.txt` with bash and names it. Real patches are harvested and a
// real gate runs. The arms start from the prime: in the prime's folder a
// `run -s PRIME --fork`, in a workspace of their own an imported copy (one
// process each), or, with --serve, sessions forked on one server.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Harvest } from "../src/bon/harvest.ts";
import { BIN } from "./helpers.ts";
import { peerOrSkip } from "./peers/peers.ts";
import { startOpenAIStandin, type Standin } from "./standins/openai.ts";
import { isTitleRequest, opencodeEnv } from "./standins/opencode.ts";
import type { RecordedRequest, Reply } from "./standins/util.ts";
import { removeTempDirs, spawnCollect, tempDir } from "./standins/util.ts";
import { leftAfter } from "./standins/world.ts";

const OPENCODE = peerOrSkip("opencode");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

function git(cwd: string, ...args: string[]): string {
  const proc = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

type Json = Record<string, any>;

const text = (content: unknown): string => (typeof content === "string" ? content : Array.isArray(content) ? content.map((c: Json) => c.text ?? "").join("") : "");
const envelope = (value: object) => `Here is my report.\n\n\`\`\`json\n${JSON.stringify(value)}\n\`\`\``;

/** What each arm writes, in the order the arms first ask: green, red by the gate, green. */
const VARIANTS = ["42", "41", "42"];

/** The model: a state machine over the chat so far (stateless but for which arm got which variant). */
function model() {
  let arms = 0;
  return (req: RecordedRequest): Reply => {
    if (isTitleRequest(req)) return { text: "A title" };
    const messages = req.messages as Json[];
    const lastUser = messages.findLastIndex((m) => m.role === "user");
    const ask = text(messages[lastUser]?.content);
    const step = messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length;
    if (ask.includes("READING ONLY")) {
      if (step === 0) return { toolCall: { name: "bash", arguments: { command: "cat specs/task.md", description: "read the spec" } } };
      return { text: envelope({ status: "success", summary: "I will write 42 to answer.txt.", changed_files: [] }) };
    }
    if (ask.includes("now implement the spec")) {
      if (step === 0) return { toolCall: { name: "bash", arguments: { command: `echo ${VARIANTS[arms++ % VARIANTS.length]} > answer.txt`, description: "write the answer" } } };
      return { text: envelope({ status: "success", summary: "Wrote answer.txt.", changed_files: ["answer.txt"] }) };
    }
    return { text: "?" };
  };
}

interface World {
  dir: string;
  repo: string;
  home: string;
  env: Record<string, string>;
  standin: Standin;
}

function world(): World {
  const dir = tempDir("agentport-bon-opencode-");
  const standin = startOpenAIStandin(model());
  standins.push(standin);
  const repo = join(dir, "repo");
  git(dir, "init", "-q", "-b", "main", repo);
  writeFileSync(join(repo, "README.md"), "# demo\n");
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "init");
  mkdirSync(join(repo, "specs"));
  writeFileSync(join(repo, "specs", "task.md"), "# Task\n\nWrite the number 42, on one line, to answer.txt at the top of the repository.\n");
  const home = join(dir, "agentport");
  return { dir, repo, home, standin, env: { ...opencodeEnv(dir, standin.url), AGENTPORT_HOME: home, AGENTPORT_OPENCODE_BIN: OPENCODE ?? "" } };
}

async function bon(w: World, extra: string[]) {
  const args = ["bon", "specs/task.md", "--agent", "opencode", "--model", "standin/standin-model", "--arms", "3", "--gate", "grep -qx 42 answer.txt", "--json", "--progress", "off", ...extra];
  const ran = await spawnCollect([BIN, ...args], { cwd: w.repo, env: w.env, timeoutMs: 280_000 });
  return { ...ran, harvest: ran.stdout.trim().startsWith("{") ? (JSON.parse(ran.stdout) as Harvest) : null };
}

async function expectBatch(w: World, h: Harvest) {
  expect(h.agent).toBe("opencode");
  // The user's checkout as found: only the untracked spec.
  expect(git(w.repo, "status", "--porcelain", "--untracked-files=all")).toBe("?? specs/task.md\n");
  expect(existsSync(join(w.repo, "answer.txt"))).toBe(false);
  expect(existsSync(join(h.run_dir, "harvest.json"))).toBe(true);
  expect(h.prime).toMatchObject({ ok: true, status: "completed", summary: "I will write 42 to answer.txt." });
  expect(h.prime!.agent_session_id).toStartWith("ses_");
  const wrote = (a: Harvest["arms"][number]) => readFileSync(a.patch!, "utf8").match(/^\+(4[12])$/m)?.[1];
  expect(h.arms.map(wrote).sort()).toEqual(["41", "42", "42"]);
  for (const a of h.arms) {
    expect(a.agent_session_id).toStartWith("ses_");
    expect(a.agent_session_id).not.toBe(h.prime!.agent_session_id);
    if (wrote(a) === "42") expect(a).toMatchObject({ verdict: "green", reason: "" });
    else expect(a).toMatchObject({ verdict: "red", reason: "gate `grep -qx 42 answer.txt` exited 1" });
    expect(a.tokens!).toBeGreaterThan(0);
    expect(a.cost_micro_usd!).toBeGreaterThan(0);
  }
  const winner = h.arms.find((a) => a.arm === h.winner?.arm)!;
  expect(winner.verdict).toBe("green");
  git(w.repo, "apply", "--check", "--index", winner.patch!);
  // Every arm's first request carried the prime's reading: it started from the prime.
  const armFirsts = w.standin.requests.filter((r) => !isTitleRequest(r) && text((r.messages as Json[]).at(-1)?.content).includes("now implement the spec"));
  expect(armFirsts.length).toBe(3);
  for (const r of armFirsts) expect(JSON.stringify(r.messages)).toContain("I will write 42 to answer.txt.");
  // The ledger: opencode sessions, each arm's parent the prime, each bound to its ses_ id.
  const db = new Database(join(w.home, "ledger.sqlite"), { readonly: true });
  const rows = db
    .query<Json, [string]>("SELECT p.name, p.ok, p.tokens_in, p.cost_micro_usd, s.id, s.agent, s.parent_id, s.agent_session_id FROM phases p JOIN sessions s ON s.id = p.session_id WHERE p.run_id = ? AND p.kind != 'workspace'")
    .all(h.batch_id);
  db.close();
  expect(rows.map((r) => r.name).sort()).toEqual(["arm-1", "arm-2", "arm-3", "check", "harvest", "prime"]);
  for (const r of rows) expect(r.agent).toBe("opencode");
  expect(rows.find((r) => r.name === "prime")).toMatchObject({ id: h.prime!.session_id, parent_id: null, agent_session_id: h.prime!.agent_session_id });
  for (const a of h.arms) {
    expect(rows.find((r) => r.name === `arm-${a.arm}`)).toMatchObject({ id: a.session_id, parent_id: h.prime!.session_id, agent_session_id: a.agent_session_id, ok: a.verdict === "green" ? 1 : 0, tokens_in: a.tokens_detail!.input, cost_micro_usd: a.cost_micro_usd });
  }
  // Nothing left running, no workspace left, no worktree in the user's repository.
  expect(await leftAfter(w.dir)).toEqual([]);
  expect(existsSync(join(h.run_dir, "workspaces"))).toBe(false);
  expect(git(w.repo, "worktree", "list").trim().split("\n").length).toBe(1);
}

describe.skipIf(OPENCODE === null)("agentport bon --agent opencode with the real opencode 1.18.33", () => {
  test("one-shot, one after the other in one workspace: each arm `run -s PRIME --fork`", async () => {
    const w = world();
    const { code, harvest, stderr } = await bon(w, []);
    if (harvest === null) throw new Error(`no harvest (exit ${code}): ${stderr}`);
    expect(code).toBe(0);
    expect(harvest).toMatchObject({ mode: "sequential", sessions: "one-shot" });
    await expectBatch(w, harvest);
  }, 300_000);

  test("one-shot, in parallel: arm 1 forks in the prime's workspace, arms 2 and 3 run an imported copy in their own", async () => {
    const w = world();
    const { code, harvest, stderr } = await bon(w, ["--parallel"]);
    if (harvest === null) throw new Error(`no harvest (exit ${code}): ${stderr}`);
    expect(code).toBe(0);
    expect(harvest).toMatchObject({ mode: "parallel", sessions: "one-shot" });
    await expectBatch(w, harvest);
    // Each arm's tool ran in its own workspace, not in the prime's.
    const cwds = harvest.arms.map((a) => a.cwd);
    expect(new Set(cwds).size).toBe(3);
  }, 300_000);

  test("one server, one after the other: the prime a session of `opencode serve`, each arm a fork of it", async () => {
    const w = world();
    const { code, harvest, stderr } = await bon(w, ["--serve"]);
    if (harvest === null) throw new Error(`no harvest (exit ${code}): ${stderr}`);
    expect(code).toBe(0);
    expect(harvest).toMatchObject({ mode: "sequential", sessions: "server" });
    expect(stderr).toContain("bon: opencode serve listening on http://127.0.0.1:");
    await expectBatch(w, harvest);
  }, 300_000);

  test("one server, in parallel: arms forked from the prime at once, moved into their own workspaces", async () => {
    const w = world();
    const { code, harvest, stderr } = await bon(w, ["--serve", "--parallel"]);
    if (harvest === null) throw new Error(`no harvest (exit ${code}): ${stderr}`);
    expect(code).toBe(0);
    expect(harvest).toMatchObject({ mode: "parallel", sessions: "server" });
    await expectBatch(w, harvest);
  }, 300_000);

  test("--serve is opencode's: with pi it is a usage error (exit 2), nothing run", async () => {
    const w = world();
    const ran = await spawnCollect([BIN, "bon", "specs/task.md", "--serve", "--progress", "off"], { cwd: w.repo, env: w.env, timeoutMs: 20_000 });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("--serve is opencode's");
    expect(w.standin.requests.length).toBe(0);
  });
});
