// `agentport bon` with the real pi 0.73.1 (the devDependency) against the
// loopback OpenAI stand-in: no key, no network. The stand-in plays the model:
// the prime reads the spec with pi's `read` tool and reports an envelope with
// no changed files; each arm writes `answer.txt` with pi's own `write` tool and
// reports it through the envelope tool. A real patch is harvested and a real
// gate runs. Also measured here: the prime's tokens paid once against the N
// times N independent runs would have paid them.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { totalTokens, type Harvest } from "../src/bon/harvest.ts";
import { BIN, ROOT } from "./helpers.ts";
import { piEnv, startOpenAIStandin, type Standin } from "./standins/openai.ts";
import type { RecordedRequest, Reply } from "./standins/util.ts";
import { git, specRepo } from "./standins/spec-repo.ts";
import { removeTempDirs, spawnCollect, tempDir } from "./standins/util.ts";

const PI = join(ROOT, "node_modules", ".bin", "pi");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

type Json = Record<string, any>;

const text = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((c: Json) => c.text ?? "").join("") : "";

/** What each arm writes, in the order the arms first ask: green, red by the gate, green but wordier (dearer). */
const VARIANTS = [
  { content: "42\n", preamble: "" },
  { content: "41\n", preamble: "" },
  {
    content: "42\n",
    preamble: `I will now write the answer file, after thinking it over at some length. ${"Careful reasoning. ".repeat(120)}`,
  },
];

/** The model: a state machine over the chat so far (stateless but for which arm got which variant). */
function model() {
  let arms = 0;
  return (req: RecordedRequest): Reply => {
    const messages = req.messages as Json[];
    const lastUser = messages.findLastIndex((m) => m.role === "user");
    const ask = text(messages[lastUser]?.content);
    const after = messages.slice(lastUser + 1);
    const step = after.filter((m) => m.role === "assistant").length;
    if (ask.includes("READING ONLY")) {
      if (step === 0) return { toolCall: { name: "read", arguments: { path: "specs/task.md" } } };
      if (step === 1)
        return {
          toolCall: {
            name: "report_phase",
            arguments: { status: "success", summary: "I will write 42 to answer.txt.", changed_files: [] },
          },
        };
      return { text: "Read." };
    }
    if (ask.includes("now implement the spec")) {
      if (step === 0) {
        const v = VARIANTS[arms++ % VARIANTS.length]!;
        return {
          text: v.preamble || undefined,
          toolCall: { name: "write", arguments: { path: "answer.txt", content: v.content } },
        } as Reply;
      }
      if (step === 1)
        return {
          toolCall: { name: "report_phase", arguments: { status: "success", summary: "Wrote answer.txt.", changed_files: ["answer.txt"] } },
        };
      return { text: "Done." };
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
  const dir = tempDir("agentport-bon-pi-");
  const standin = startOpenAIStandin(model());
  standins.push(standin);
  const repo = specRepo(dir);
  const home = join(dir, "agentport");
  return {
    dir,
    repo,
    home,
    standin,
    env: { ...piEnv(dir, standin.url), AGENTPORT_HOME: home, AGENTPORT_PI_BIN: PI, AGENTPORT_GATEWAY: "" },
  };
}

async function bon(w: World, extra: string[]) {
  const args = [
    "bon",
    "specs/task.md",
    "--model",
    "standin/standin-model",
    "--direct",
    "--require-ext",
    "agentport",
    "--gate",
    "grep -qx 42 answer.txt",
    "--json",
    "--progress",
    "off",
    ...extra,
  ];
  const ran = await spawnCollect([BIN, ...args], { cwd: w.repo, env: w.env, timeoutMs: 55_000 });
  return { ...ran, harvest: ran.stdout.trim().startsWith("{") ? (JSON.parse(ran.stdout) as Harvest) : null };
}

function expectRealBatch(w: World, h: Harvest) {
  expect(git(w.repo, "status", "--porcelain", "--untracked-files=all")).toBe("?? specs/task.md\n");
  expect(h.prime).toMatchObject({ ok: true, status: "completed", summary: "I will write 42 to answer.txt." });
  const byVariant = (content: string, wordy: boolean) =>
    h.arms.find((a) => {
      const patch = readFileSync(a.patch!, "utf8");
      return patch.includes(`+${content.trim()}\n`) && a.tokens!.output > 300 === wordy;
    });
  const green = byVariant("42", false)!;
  const dear = byVariant("42", true)!;
  const red = byVariant("41", false)!;
  expect([green, dear, red].every(Boolean)).toBe(true);
  expect(green).toMatchObject({ verdict: "green", rank: 1 });
  expect(dear).toMatchObject({ verdict: "green", rank: 2 });
  expect(red).toMatchObject({ verdict: "red", rank: 3, reason: "gate `grep -qx 42 answer.txt` exited 1" });
  expect(dear.cost_micro_usd!).toBeGreaterThan(green.cost_micro_usd!);
  // A real patch, made by pi's own write tool, that applies to the tree as found.
  const patch = readFileSync(green.patch!, "utf8");
  expect(patch).toContain("diff --git a/answer.txt b/answer.txt");
  expect(patch).toContain("new file mode 100644");
  git(w.repo, "apply", "--check", "--index", green.patch!);
  expect(h.winner?.arm).toBe(green.arm);
  // The ledger agrees with harvest.json, arm by arm.
  const db = new Database(join(w.home, "ledger.sqlite"), { readonly: true });
  const rows = db
    .query<Json, [string]>(
      "SELECT p.name, p.tokens_in, p.tokens_out, p.cost_micro_usd, p.ok, s.parent_id FROM phases p JOIN sessions s ON s.id = p.session_id WHERE p.run_id = ? AND p.kind != 'workspace'",
    )
    .all(h.batch_id);
  db.close();
  expect(rows.map((r) => r.name).sort()).toEqual(["arm-1", "arm-2", "arm-3", "check", "harvest", "prime"]);
  for (const a of h.arms) {
    expect(rows.find((r) => r.name === `arm-${a.arm}`)).toMatchObject({
      tokens_in: a.tokens!.input,
      tokens_out: a.tokens!.output,
      cost_micro_usd: a.cost_micro_usd,
      ok: a.verdict === "green" ? 1 : 0,
      parent_id: h.prime!.session_id,
    });
  }
  expect(rows.find((r) => r.name === "prime")).toMatchObject({
    tokens_in: h.prime!.tokens!.input,
    cost_micro_usd: h.prime!.cost_micro_usd,
  });
}

/** The prime's tokens: paid once here, N times by N independent runs. */
function measure(label: string, h: Harvest): void {
  const p = h.prime_paid!;
  const arms = h.arms.reduce((s, a) => s + (totalTokens(a.tokens) ?? 0), 0);
  const armsCost = h.arms.reduce((s, a) => s + (a.cost_micro_usd ?? 0), 0);
  const batch = totalTokens(h.totals.tokens)!;
  const cold = p.tokens_n_times! + arms;
  console.log(
    `[bon measure, ${label}] prime ${p.tokens_once} tokens ($${(p.cost_micro_usd_once! / 1e6).toFixed(4)}) paid once; ${p.arms} independent runs: ${p.tokens_n_times} tokens ($${(p.cost_micro_usd_n_times! / 1e6).toFixed(4)}); ` +
      `arms ${arms} tokens ($${(armsCost / 1e6).toFixed(4)}); batch ${batch} tokens vs ~${cold} cold: ${(((cold - batch) / cold) * 100).toFixed(1)}% saved`,
  );
  expect(p.tokens_n_times).toBe(p.arms * p.tokens_once!);
  expect(batch).toBe(p.tokens_once! + arms);
}

describe("agentport bon with the real pi 0.73.1", () => {
  test("one after the other in one workspace: prime, three clones; a real write, a real patch, a real gate; the checkout as found", async () => {
    const w = world();
    const { code, harvest, stderr } = await bon(w, ["--arms", "3"]);
    if (harvest === null) throw new Error(`no harvest (exit ${code}): ${stderr}`);
    expect(code).toBe(0);
    expect(harvest.mode).toBe("sequential");
    expectRealBatch(w, harvest);
    // The arms carried the prime's reading: every arm's first request held the prime's envelope.
    const armFirsts = w.standin.requests.filter(
      (r) => JSON.stringify(r.messages).includes("now implement the spec") && (r.messages as Json[]).at(-1)?.role === "user",
    );
    expect(armFirsts.length).toBe(3);
    for (const r of armFirsts) expect(JSON.stringify(r.messages)).toContain("I will write 42 to answer.txt.");
    measure("sequential", harvest);
  }, 60_000);

  test("in parallel: each arm `pi --mode rpc --fork <prime>` in a workspace of its own", async () => {
    const w = world();
    const { code, harvest, stderr } = await bon(w, ["--arms", "3", "--parallel"]);
    if (harvest === null) throw new Error(`no harvest (exit ${code}): ${stderr}`);
    expect(code).toBe(0);
    expect(harvest.mode).toBe("parallel");
    expectRealBatch(w, harvest);
    for (const a of harvest.arms) {
      const header = JSON.parse(readFileSync(a.session_file!, "utf8").split("\n")[0]!);
      expect(header).toMatchObject({ cwd: a.cwd, parentSession: harvest.prime!.session_file });
    }
    expect(git(w.repo, "worktree", "list").trim().split("\n").length).toBe(1);
    measure("parallel", harvest);
  }, 60_000);
});
