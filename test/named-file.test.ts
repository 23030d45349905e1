// Every read of a named file is bounded and refuses non-files (issue 24, item
// 9), through the compiled binary: /dev/zero (endless), a FIFO (an open that
// waits for a writer forever) and a directory, named to import, --env-file,
// --append-system-prompt @FILE, --schema, replay and (as a run folder's
// progress.ndjson) follow, are each one line naming the path and what it is,
// exit 2, no stack trace, and no hang. A 20 MiB line to import is refused
// while it is read, its memory bounded by the line bound.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, fakeProject, type FakeProject } from "./helpers.ts";
import { spawnCollect } from "./standins/util.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function project(): FakeProject & { fifo: string; dir: string } {
  const w = fakeProject("agentport-named-file-");
  made.push(w.root);
  const fifo = join(w.root, "a-fifo");
  expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
  const dir = join(w.root, "a-dir");
  mkdirSync(dir);
  return { ...w, fifo, dir };
}

/** Run agentport; a hang or an endless read is killed after 15 s (and fails the test). */
const bounded = (w: FakeProject, args: string[], stdin?: string) =>
  spawnCollect([BIN, ...args], {
    cwd: w.proj,
    env: { ...process.env, NO_COLOR: "1", ...w.env } as Record<string, string>,
    stdin,
    timeoutMs: 15_000,
  });

function refusedInOneLine(ran: { code: number | null; stderr: string; timedOut?: boolean }, path: string, what: string) {
  expect(ran.timedOut ?? false).toBe(false);
  expect(ran.code).toBe(2);
  const lines = ran.stderr.split("\n").filter((l) => l.trim() !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(path);
  expect(lines[0]).toContain(what);
  expect(ran.stderr).not.toContain("    at ");
}

const KINDS: [string, (w: ReturnType<typeof project>) => string, string][] = [
  ["/dev/zero", () => "/dev/zero", "a character device"],
  ["a FIFO", (w) => w.fifo, "a FIFO"],
  ["a folder", (w) => w.dir, "a folder"],
];

const COMMANDS: [string, (path: string) => string[]][] = [
  ["import", (p) => ["import", p]],
  ["--env-file", (p) => ["run", "--agent", "claude", "--env-file", p, "hi"]],
  ["--append-system-prompt @FILE", (p) => ["run", "--agent", "claude", "--append-system-prompt", `@${p}`, "hi"]],
  ["--schema", (p) => ["run", "--agent", "claude", "--schema", p, "hi"]],
  ["replay", (p) => ["replay", p]],
];

describe.each(COMMANDS)("%s", (_name, argv) => {
  test.each(KINDS)(
    "of %s: one line naming it, exit 2, no hang",
    async (_kind, path, what) => {
      const w = project();
      refusedInOneLine(await bounded(w, argv(path(w))), path(w), what);
    },
    30_000,
  );
});

describe("follow", () => {
  test.each(KINDS)(
    "a run folder whose progress.ndjson is %s: one line, exit 2, no hang",
    async (_kind, path, what) => {
      const w = project();
      const ran = await bounded(w, ["run", "--agent", "claude", "--json", "hi"]);
      expect(ran.code).toBe(0);
      const id = JSON.parse(ran.stdout).session_id as string;
      const db = new Database(join(w.env.AGENTPORT_HOME!, "ledger.sqlite"), { readonly: true });
      const runDir = db.query<{ run_dir: string }, [string]>("SELECT run_dir FROM phases WHERE session_id = ?").get(id)!.run_dir;
      db.close();
      const progress = join(runDir, "progress.ndjson");
      rmSync(progress);
      symlinkSync(path(w), progress);
      refusedInOneLine(await bounded(w, ["follow", id]), progress, what);
    },
    30_000,
  );
});

describe("an import of one 20 MiB line", () => {
  test("is refused while it is read: one line, exit 2, nothing imported, its memory bounded", async () => {
    const w = project();
    const file = join(w.root, "big.ndjson");
    writeFileSync(file, `{"id":"big","model":"${"x".repeat(20 * 1024 * 1024)}"}\n`);
    const time = Bun.which("time") ?? "/usr/bin/time";
    const ran = await spawnCollect([time, "-v", BIN, "import", file], {
      cwd: w.proj,
      env: { ...process.env, NO_COLOR: "1", ...w.env } as Record<string, string>,
      timeoutMs: 30_000,
    });
    expect(ran.code).toBe(2);
    const [error] = ran.stderr.split("\n").filter((l) => l.includes("[error]"));
    expect(error).toContain(
      `${file} line 1: more than 16777216 bytes; an exported session is at most 16777216 bytes (nothing was imported)`,
    );
    const rss = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(ran.stderr)?.[1]);
    // The line bound is 16 MiB; agentport itself (the runtime) takes ~40 MiB.
    console.log(`import of a 20 MiB line: peak RSS ${Math.round(rss / 1024)} MiB`);
    expect(rss).toBeLessThan(40 * 1024 + 2 * 16 * 1024);
    const listed = await bounded(w, ["sessions", "--json"]);
    expect(listed.stdout.trim()).toBe("");
  }, 60_000);
});
