// `agentport run --agent opencode --serve` through the compiled binary
// against the fake server (`fake-opencode serve`): the driver's edges that
// the real opencode makes slow or hard to reach. A stall and Ctrl-C (an in-group tool
// process and one in its own session killed with the server), --timeout,
// a server that dies mid-turn (crashed, not ours), a server that never says
// it is listening, a resume of a session the server does not have, and the
// fake's own password check.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { isRunning } from "../src/io/proc.ts";
import { VerdictSchema } from "../src/core/verdict.ts";
import { BIN, tempDir } from "./helpers.ts";
import { spawnCollect } from "./standins/util.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function world() {
  const root = tempDir("agentport-serve-fake-");
  dirs.push(root);
  const project = join(root, "project");
  mkdirSync(project, { recursive: true });
  mkdirSync(join(root, "bin"));
  const fake = join(root, "bin", "fake-opencode");
  symlinkSync(BIN, fake);
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(root, "home"),
    AGENTPORT_HOME: join(root, "state"),
    AGENTPORT_CONFIG: "",
    AGENTPORT_OPENCODE_BIN: fake,
    NO_COLOR: "1",
  };
  return { root, project, fake, env };
}

async function run(w: ReturnType<typeof world>, scenario: unknown, extra: string[] = [], env: Record<string, string> = {}) {
  const ran = await spawnCollect([BIN, "run", "--agent", "opencode", "--serve", "--json", ...extra, "-"], {
    cwd: w.project,
    env: { ...w.env, AGENTPORT_FAKE_SCENARIO: typeof scenario === "string" ? scenario : JSON.stringify(scenario), ...env },
    stdin: "Go",
    timeoutMs: 60_000,
  });
  return { ...ran, verdict: ran.stdout.trim().startsWith("{") ? VerdictSchema.parse(JSON.parse(ran.stdout)) : null };
}

const pidOf = (file: string) => Number(readFileSync(file, "utf8"));

describe("opencode --serve against the fake server", () => {
  test("opencode's ses_ id is bound in the ledger before the prompt (the fake refuses a prompt for a session the ledger does not name)", async () => {
    const w = world();
    const ran = await run(w, "text", [], { AGENTPORT_FAKE_CHECK_LEDGER: join(w.env.AGENTPORT_HOME, "ledger.sqlite") });
    expect(ran.code).toBe(0);
    expect(ran.verdict?.text).toBe("Hello from the fake agent.");
    // And the check can fail: a ledger that names nothing refuses the prompt.
    const empty = await run(w, "text", [], { AGENTPORT_FAKE_CHECK_LEDGER: join(w.root, "no-such-ledger.sqlite") });
    expect(empty.code).toBe(1);
    expect(empty.verdict?.failure?.message).toContain("cannot read the ledger");
  });

  test("a stall: the session aborted (its aborted message read), the server and its tool processes killed, in-group and setsid'd", async () => {
    const w = world();
    const inGroup = join(w.root, "in-group.pid");
    const own = join(w.root, "own.pid");
    const ran = await run(
      w,
      { steps: [{ text: "Working." }, { grandchild: inGroup }, { grandchild: own, ownGroup: true }, { hang: true }] },
      ["--stall", "1.5"],
    );
    expect(ran.code).toBe(4);
    expect(ran.verdict).toMatchObject({ status: "stalled", ok: false });
    expect(ran.verdict?.summary.error_name).toBe("MessageAbortedError");
    for (const file of [inGroup, own]) expect(isRunning(pidOf(file))).toBe(false);
  });

  test("Ctrl-C of agentport: the session aborted, status aborted (130), the server and its tool gone", async () => {
    const w = world();
    const tool = join(w.root, "tool.pid");
    const child = Bun.spawn([BIN, "run", "--agent", "opencode", "--serve", "--json", "-"], {
      cwd: w.project,
      env: {
        ...w.env,
        AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps: [{ text: "Working." }, { grandchild: tool, ownGroup: true }, { hang: true }] }),
      },
      stdin: new TextEncoder().encode("Go"),
      stdout: "pipe",
      stderr: "ignore",
    });
    const until = performance.now() + 30_000;
    while (!existsSync(tool) && performance.now() < until) await Bun.sleep(50);
    child.kill("SIGINT");
    const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    expect(code).toBe(130);
    expect(VerdictSchema.parse(JSON.parse(stdout)).status).toBe("aborted");
    expect(isRunning(pidOf(tool))).toBe(false);
  });

  test("--timeout: the same stop, status timeout", async () => {
    const w = world();
    const ran = await run(w, { steps: [{ text: "Working." }, { hang: true }] }, ["--timeout", "1.5"]);
    expect(ran.code).toBe(4);
    expect(ran.verdict?.status).toBe("timeout");
  });

  test("the server dies mid-turn: crashed (a signal agentport did not send), the stream's end said", async () => {
    const w = world();
    const ran = await run(w, { steps: [{ text: "Starting." }, { signal: "SIGKILL" }] });
    expect(ran.code).toBe(1);
    expect(ran.verdict?.status).toBe("crashed");
    expect(ran.verdict?.failure?.message).toContain("SIGKILL");
  });

  test("a server that never says it is listening: failed, environment, exit 5, the session declared and its phase finished", async () => {
    const w = world();
    const silent = join(w.root, "bin", "silent-opencode");
    // It passes the capability probe (a version, run's flags), then `serve` prints nothing.
    await Bun.write(
      silent,
      `#!/bin/sh\ncase "$*" in *--version*) echo 1.18.33; exit 0;; *--help*) echo "--format --session --fork --model --auto"; exit 0;; esac\nexec sleep 600\n`,
    );
    Bun.spawnSync(["chmod", "+x", silent]);
    // The start-up bound is 30 s; the run's own --timeout does not shorten it, so this waits it out.
    const ran = await run(w, "text", [], { AGENTPORT_OPENCODE_BIN: silent });
    expect(ran.code).toBe(5);
    expect(ran.verdict?.failure?.kind).toBe("environment");
    expect(ran.verdict?.failure?.message).toContain("did not say it was listening");
    const db = new Database(join(w.env.AGENTPORT_HOME, "ledger.sqlite"), { readonly: true });
    const phase = db.query<{ status: string }, []>("SELECT status FROM phases").get();
    db.close();
    expect(phase?.status).toBe("failed");
  }, 60_000);

  test("a resume of a session this opencode does not have: failed, opencode's 404 named, nothing prompted", async () => {
    const w = world();
    const first = await run(w, "text");
    expect(first.code).toBe(0);
    // opencode forgets its sessions (another data folder): the bound id is unknown to the new server.
    const resumed = await spawnCollect([BIN, "resume", first.verdict?.session_id ?? "", "--json", "-"], {
      cwd: w.project,
      env: { ...w.env, HOME: join(w.root, "other-home"), AGENTPORT_FAKE_SCENARIO: "text" },
      stdin: "Again",
      timeoutMs: 60_000,
    });
    expect(resumed.code).toBe(1);
    const v = VerdictSchema.parse(JSON.parse(resumed.stdout));
    expect(v.failure?.kind).toBe("agent_error");
    expect(v.failure?.message).toContain("404");
  });

  test("the fake server refuses a request without its password, as opencode does", async () => {
    const w = world();
    const proc = Bun.spawn([w.fake, "serve", "--hostname", "127.0.0.1", "--port", "0"], {
      cwd: w.project,
      env: { ...w.env, OPENCODE_SERVER_PASSWORD: "fake-password-123" },
      stdout: "pipe",
      stderr: "ignore",
    });
    const reader = proc.stdout.getReader();
    let text = "";
    while (!text.includes("\n")) text += new TextDecoder().decode((await reader.read()).value);
    const url = /listening on (\S+)/.exec(text)?.[1] ?? "";
    expect((await fetch(`${url}/session`, { method: "POST" })).status).toBe(401);
    const auth = `Basic ${Buffer.from("opencode:fake-password-123").toString("base64")}`;
    expect((await fetch(`${url}/session`, { method: "POST", headers: { authorization: auth } })).status).toBe(200);
    proc.kill("SIGTERM");
    await proc.exited;
    expect(existsSync(w.project)).toBe(true);
  });
});
