// `agentport acp` through the compiled binary: a small ACP client (acp-client.ts)
// drives it, fronting the fake agents as real processes. A session is declared
// in the ledger by its first prompt (its id the ACP session id), each prompt
// is a supervised run whose verdict ends the turn, session/cancel stops the
// run, session/load resumes in the birth folder only, and hostile input gets a
// JSON-RPC error, never a crash.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { fakeProject, type FakeProject } from "./helpers.ts";
import { OPENCODE_POLICY_SCENARIO } from "./policy-scenario.ts";
import { AcpPeer } from "./acp-client.ts";
import { leftAfter, processesIn } from "./standins/world.ts";

const peers: AcpPeer[] = [];
afterEach(() => {
  for (const p of peers.splice(0)) p.kill();
});

function serve(p: FakeProject, args: string[], env: Record<string, string> = {}): AcpPeer {
  const peer = new AcpPeer(args, { cwd: p.proj, env: { ...p.env, ...env } });
  peers.push(peer);
  return peer;
}

async function newSession(peer: AcpPeer, cwd: string): Promise<string> {
  await peer.initialize();
  const made = await peer.request("session/new", { cwd, mcpServers: [] });
  expect(made.error).toBeUndefined();
  return made.result.sessionId as string;
}

const prompt = (peer: AcpPeer, sessionId: string, text: string) =>
  peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

const ledgerRows = (p: FakeProject, sql: string) => {
  const db = new Database(join(p.env.AGENTPORT_HOME!, "ledger.sqlite"), { readonly: true });
  try {
    return db.query(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
};

describe("agentport acp (fronting the fake agents)", () => {
  test("initialize, session/new, a prompt with the fake claude: updates streamed, end_turn with the verdict, the session in the ledger under the ACP id", async () => {
    const p = fakeProject("agentport-acps-", { AGENTPORT_FAKE_SCENARIO: "tools" });
    const peer = serve(p, ["--agent", "claude"]);
    const init = await peer.initialize();
    expect(init.result).toMatchObject({ protocolVersion: 1, agentCapabilities: { loadSession: true }, agentInfo: { name: "agentport" } });
    const made = await peer.request("session/new", { cwd: p.proj, mcpServers: [] });
    const sessionId = made.result.sessionId as string;
    const answer = await prompt(peer, sessionId, "Read the notes");
    expect(answer.error).toBeUndefined();
    expect(answer.result.stopReason).toBe("end_turn");
    const verdict = answer.result._meta.agentport.verdict;
    expect(verdict).toMatchObject({ agent: "claude", status: "completed", ok: true, session_id: sessionId });
    const updates = peer.updates(sessionId);
    const calls = updates.filter((u) => u.sessionUpdate === "tool_call");
    expect(calls.map((c) => c.kind)).toEqual(["read", "execute", "read"]);
    expect(updates.filter((u) => u.sessionUpdate === "tool_call_update").map((u) => u.status)).toEqual([
      "completed",
      "completed",
      "failed",
    ]);
    expect(updates.at(-1)).toEqual({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } });
    // The tool's command line never leaves agentport (only the allow-listed description does).
    expect(peer.rawLines.join("\n")).not.toContain("hunter2");
    expect(ledgerRows(p, `SELECT id, agent, cwd FROM sessions`)).toEqual([{ id: sessionId, agent: "claude", cwd: realpathSync(p.proj) }]);
    // A second prompt in the session is a resume of it: a second phase of the same session.
    const again = await prompt(peer, sessionId, "And again");
    expect(again.result?.stopReason).toBe("end_turn");
    expect(ledgerRows(p, `SELECT kind FROM phases ORDER BY seq`).map((r) => r.kind)).toEqual(["run", "resume"]);
    expect(await peer.close()).toBe(0);
  }, 60_000);

  test("a failed run is an error answer carrying the verdict, never a finished turn", async () => {
    const p = fakeProject("agentport-acps-", { AGENTPORT_FAKE_SCENARIO: "crash" });
    const peer = serve(p, ["--agent", "claude"]);
    const sessionId = await newSession(peer, p.proj);
    const answer = await prompt(peer, sessionId, "go");
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ code: -32000, data: { agentport: { exit_code: 1, verdict: { status: "failed", ok: false } } } });
    expect(answer.error!.message).toStartWith("failed: ");
  }, 60_000);

  test("session/cancel stops the run: the prompt answers cancelled, the agent is gone", async () => {
    const p = fakeProject("agentport-acps-", { AGENTPORT_FAKE_SCENARIO: "hang" });
    const peer = serve(p, ["--agent", "claude"]);
    const sessionId = await newSession(peer, p.proj);
    const id = 99;
    peer.send({ id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "go" }] } });
    await Bun.sleep(1500);
    // A second prompt while the first runs is refused, not queued.
    const busy = await prompt(peer, sessionId, "again");
    expect(busy.error?.message).toContain("still answering a prompt");
    const started = performance.now();
    peer.send({ method: "session/cancel", params: { sessionId } });
    const answer = await peer.waitFor((m) => m.id === id);
    expect(answer.result?.stopReason).toBe("cancelled");
    expect(answer.result._meta.agentport.verdict.status).toBe("aborted");
    expect(performance.now() - started).toBeLessThan(10_000);
  }, 60_000);

  test("session/load: resumes in the birth folder, refused from another folder and for an unknown id", async () => {
    const p = fakeProject("agentport-acps-", { AGENTPORT_FAKE_SCENARIO: "text" });
    const first = serve(p, ["--agent", "claude"]);
    const sessionId = await newSession(first, p.proj);
    expect((await prompt(first, sessionId, "hi")).result?.stopReason).toBe("end_turn");
    expect(await first.close()).toBe(0);

    const other = join(p.root, "elsewhere");
    mkdirSync(other);
    const second = serve(p, ["--agent", "claude"]);
    await second.initialize();
    const refused = await second.request("session/load", { sessionId, cwd: other, mcpServers: [] });
    expect(refused.error?.code).toBe(-32001);
    expect(refused.error?.message).toContain(`was born in ${realpathSync(p.proj)}`);
    const unknown = await second.request("session/load", {
      sessionId: "00000000-0000-4000-8000-000000000000",
      cwd: p.proj,
      mcpServers: [],
    });
    expect(unknown.error?.message).toContain("no session 00000000-0000-4000-8000-000000000000 in the ledger");
    // A prompt in a session that was refused: unknown on this connection.
    expect((await prompt(second, sessionId, "x")).error?.message).toContain(`no session "${sessionId}" on this connection`);
    const loaded = await second.request("session/load", { sessionId, cwd: p.proj, mcpServers: [] });
    expect(loaded.error).toBeUndefined();
    const answer = await prompt(second, sessionId, "again");
    expect(answer.result?.stopReason).toBe("end_turn");
    expect(ledgerRows(p, `SELECT kind FROM phases ORDER BY seq`).map((r) => r.kind)).toEqual(["run", "resume"]);
  }, 60_000);

  test("fronting an ACP agent (--agent acp): its permission request is forwarded to the client and answered by it; with --permissions the file answers", async () => {
    const p = fakeProject("agentport-acps-", { AGENTPORT_FAKE_SCENARIO: "permission" });
    const peer = serve(p, ["--agent", "acp", "--acp-command", "fake-acp"]);
    const sessionId = await newSession(peer, p.proj);
    const ask = async (choose: string) => {
      const before = peer.received.length;
      const promptId = `p-${choose}`;
      peer.send({ id: promptId, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "write it" }] } });
      const asked = await peer.waitFor((m) => peer.received.indexOf(m) >= before && m.method === "session/request_permission");
      expect(asked.params).toMatchObject({ sessionId, toolCall: { kind: "edit", title: "Writing to made-by-fake.txt" } });
      const option = asked.params!.options.find((o: { kind: string }) => o.kind === choose);
      peer.send({ id: asked.id, result: { outcome: { outcome: "selected", optionId: option.optionId } } });
      return (await peer.waitFor((m) => m.id === promptId)).result;
    };
    const rejected = await ask("reject_once");
    expect(rejected.stopReason).toBe("end_turn");
    expect(rejected._meta.agentport.verdict.refused).toEqual([
      { kind: "permission", subject: "edit made-by-fake.txt: rejected by the ACP client" },
    ]);
    expect(existsSync(join(p.proj, "made-by-fake.txt"))).toBe(false);
    const allowed = await ask("allow_once");
    expect(allowed._meta.agentport.verdict.refused).toEqual([]);
    expect(existsSync(join(p.proj, "made-by-fake.txt"))).toBe(true);
    await peer.close();

    // A permission mode given answers at once: nothing is asked of the client.
    const moded = serve(p, ["--agent", "acp", "--acp-command", "fake-acp", "--permission-mode", "acceptEdits"]);
    const modedId = await newSession(moded, p.proj);
    expect((await prompt(moded, modedId, "write it")).result._meta.agentport.verdict.refused).toEqual([]);
    expect(moded.received.some((m) => m.method === "session/request_permission")).toBe(false);
    await moded.close();

    // Nor with a policy file.
    const file = join(p.root, "policy.json");
    writeFileSync(file, JSON.stringify({ rules: [{ decision: "allow", kind: "read" }] }));
    const guarded = serve(p, ["--agent", "acp", "--acp-command", "fake-acp", "--permissions", file]);
    const guardedId = await newSession(guarded, p.proj);
    const answer = await prompt(guarded, guardedId, "write it");
    expect(answer.result._meta.agentport.verdict.refused[0].subject).toContain(`no rule of ${file} allows it`);
    expect(guarded.received.some((m) => m.method === "session/request_permission")).toBe(false);
  }, 60_000);

  test("fronting opencode --serve with --permissions: the file answers its asks (nothing forwarded to the client), the edit under src/ written, the others refused", async () => {
    const p = fakeProject("agentport-acps-", { AGENTPORT_FAKE_SCENARIO: JSON.stringify(OPENCODE_POLICY_SCENARIO) });
    mkdirSync(join(p.proj, "src"));
    const file = join(p.root, "policy.json");
    writeFileSync(file, JSON.stringify({ rules: [{ decision: "allow", kind: "edit", path: "src/**" }] }));
    const peer = serve(p, ["--agent", "opencode", "--serve", "--permissions", file]);
    const sessionId = await newSession(peer, p.proj);
    const answer = await prompt(peer, sessionId, "make the files");
    expect(answer.result?.stopReason).toBe("end_turn");
    expect(answer.result._meta.agentport.verdict.refused.map((r: { subject: string }) => r.subject)).toEqual([
      "bash: touch made-by-shell.txt (rejected)",
      "edit: ../outside.txt (rejected)",
    ]);
    expect(peer.received.some((m) => m.method === "session/request_permission")).toBe(false);
    expect(existsSync(join(p.proj, "src", "inside.txt"))).toBe(true);
    expect(existsSync(join(p.root, "outside.txt"))).toBe(false);
    expect(await peer.close()).toBe(0);
  }, 60_000);

  test("the client goes away while asked: the run is cancelled, the request answered by the mode (rejected), the process exits", async () => {
    const p = fakeProject("agentport-acps-", { AGENTPORT_FAKE_SCENARIO: "permission" });
    const peer = serve(p, ["--agent", "acp", "--acp-command", "fake-acp"]);
    const sessionId = await newSession(peer, p.proj);
    peer.send({ id: "p", method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "write it" }] } });
    await peer.waitFor((m) => m.method === "session/request_permission");
    expect(await peer.close()).toBe(0);
    expect(existsSync(join(p.proj, "made-by-fake.txt"))).toBe(false);
    const phases = ledgerRows(p, "SELECT status FROM phases");
    expect(phases.length).toBe(1);
    expect(phases[0]!.status).toBe("aborted");
  }, 60_000);
});

describe("agentport acp: killed", () => {
  test("kill -9 of agentport acp mid-prompt leaves no agent behind (the keeper ends the tree)", async () => {
    const p = fakeProject("agentport-acps-", { AGENTPORT_FAKE_SCENARIO: "hang" });
    const peer = serve(p, ["--agent", "claude"]);
    const sessionId = await newSession(peer, p.proj);
    peer.send({ id: "p", method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "go" }] } });
    const until = performance.now() + 20_000;
    while (processesIn(p.proj).length < 3 && performance.now() < until) await Bun.sleep(100);
    expect(processesIn(p.proj).length).toBeGreaterThanOrEqual(3);
    peer.kill("SIGKILL");
    await peer.done;
    expect(await leftAfter(p.proj, 10_000)).toEqual([]);
  }, 60_000);
});

describe("agentport acp: hostile input gets a JSON-RPC error, never a crash", () => {
  test("a bad flag is exit 2 before a word is spoken; a prompt word is refused", async () => {
    const p = fakeProject("agentport-acps-");
    const bad = serve(p, ["--agent", "claude", "--timeout", "soon"]);
    expect(await bad.done).toBe(2);
    expect(bad.received).toEqual([]);
    const word = serve(p, ["--agent", "claude", "hello"]);
    expect(await word.done).toBe(2);
    const cwd = serve(p, ["--agent", "claude", "--cwd", p.root]);
    expect(await cwd.done).toBe(2);
    expect(cwd.received).toEqual([]);
  }, 30_000);

  test("bad JSON, not JSON-RPC, unknown methods, requests before initialize, bad params, a reused id, a 100 MB line, deep JSON", async () => {
    const p = fakeProject("agentport-acps-", { AGENTPORT_FAKE_SCENARIO: "hang" });
    const peer = serve(p, ["--agent", "claude"]);
    const errorOf = async (line: string, id: number | null = null) => {
      const before = peer.received.length;
      peer.writeRaw(`${line}\n`);
      const m = await peer.waitFor((r) => peer.received.indexOf(r) >= before && r.id === id && r.error !== undefined, 20_000);
      return m.error!;
    };
    expect((await errorOf("{not json")).code).toBe(-32700);
    expect((await errorOf("[1,2,3]")).code).toBe(-32600);
    expect((await errorOf(JSON.stringify({ jsonrpc: "1.0", id: 1, method: "initialize" }), 1)).code).toBe(-32600);
    expect(await errorOf(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: p.proj } }), 2)).toMatchObject({
      code: -32600,
      message: "invalid request: session/new before initialize; send initialize first",
    });
    expect(await errorOf(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "fs/format_disk", params: {} }), 3)).toMatchObject({
      code: -32601,
    });
    // A notification before initialize and an unknown notification get no answer (JSON-RPC), and break nothing.
    peer.send({ method: "session/cancel", params: { sessionId: "nope" } });
    peer.send({ method: "whatever/else" });
    await peer.initialize();
    expect(
      (await errorOf(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "session/new", params: { cwd: "relative/path" } }), 4)).code,
    ).toBe(-32602);
    expect(
      (await errorOf(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "session/new", params: { cwd: "/no/such/folder" } }), 5)).message,
    ).toContain("/no/such/folder: no such folder");
    expect(
      (
        await errorOf(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 8,
            method: "session/new",
            params: { cwd: p.proj, mcpServers: [{ name: "x", command: "x", args: [], env: [] }] },
          }),
          8,
        )
      ).message,
    ).toContain("passes no MCP servers");
    expect(
      (await errorOf(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "session/prompt", params: { sessionId: "x", prompt: [] } }), 6)).code,
    ).toBe(-32602);
    const sessionId = (await peer.request("session/new", { cwd: p.proj, mcpServers: [] })).result.sessionId;
    expect(
      (
        await errorOf(
          JSON.stringify({ jsonrpc: "2.0", id: 7, method: "session/prompt", params: { sessionId, prompt: [{ type: "image", data: "" }] } }),
          7,
        )
      ).code,
    ).toBe(-32602);
    // A request id reused while its first request is open.
    peer.send({ id: 50, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "hang" }] } });
    await Bun.sleep(300);
    expect(
      (await errorOf(JSON.stringify({ jsonrpc: "2.0", id: 50, method: "session/new", params: { cwd: p.proj } }), 50)).message,
    ).toContain("id 50 is still in use");
    peer.send({ method: "session/cancel", params: { sessionId } });
    expect((await peer.waitFor((m) => m.id === 50 && m.method === undefined && m.error === undefined)).result.stopReason).toBe("cancelled");
    // 100 MB on one line: dropped as it streams past, answered once, and read into one reused buffer (no 100 MB of garbage).
    const peakKb = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${peer.pid}/status`, "utf8"))![1]);
    const peakBefore = peakKb();
    const chunk = new Uint8Array(1024 * 1024).fill(0x61);
    const before = peer.received.length;
    for (let i = 0; i < 100; i++) peer.writeRaw(chunk);
    peer.writeRaw("\n");
    const big = await peer.waitFor((m) => peer.received.indexOf(m) >= before && m.error !== undefined, 60_000);
    expect(big.error!.message).toContain("was dropped");
    expect(peakKb() - peakBefore).toBeLessThan(64 * 1024);
    // JSON nested 100,000 deep.
    expect((await errorOf("[".repeat(100_000) + "]".repeat(100_000))).code).toBeOneOf([-32700, -32600]);
    // Invalid UTF-8.
    peer.writeRaw(new Uint8Array([0xff, 0xfe, 0x0a]));
    await peer.waitFor((m) => typeof m.error?.message === "string" && m.error.message.includes("UTF-8"), 10_000);
    // Still serving.
    expect((await peer.request("session/new", { cwd: p.proj, mcpServers: [] })).result.sessionId).toBeString();
    expect(await peer.close()).toBe(0);
  }, 120_000);
});
