// The home holds only what agentport made (issue 24, low items): a symlink
// planted where agentport keeps a folder or writes a file is never followed.
// `<home>/runs` a symlink: `prune` refuses in one line and deletes nothing in
// its target; `<home>/extensions/agentport.ts` a symlink: the run replaces
// the link with its own file and the target is untouched. And `prune` on a
// read-only home (a real read-only mount, by bwrap) says so in one line, exit
// 5, never a stack trace. Through the compiled binary.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, agentport, fakeProject, type FakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function world(): FakeProject & { home: string } {
  const w = fakeProject("agentport-links-", { AGENTPORT_GATEWAY: "" });
  made.push(w.root);
  return { ...w, home: w.env.AGENTPORT_HOME! };
}

/** An old folder with one file, as a run folder of 2020. */
function oldFolder(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "keep.txt"), "precious\n");
  const longAgo = new Date("2020-01-01T00:00:00Z");
  utimesSync(join(dir, "keep.txt"), longAgo, longAgo);
  utimesSync(dir, longAgo, longAgo);
}

const oneLine = (stderr: string) => stderr.trim().split("\n").length === 1 && !/\n\s+at /.test(stderr);

describe("a symlink in the home that agentport did not make", () => {
  test("<home>/runs a symlink: prune refuses in one line and deletes nothing in its target", async () => {
    const w = world();
    const victim = join(w.root, "victim");
    oldFolder(join(victim, "20200101T000000-deadbeef"));
    mkdirSync(w.home, { recursive: true });
    symlinkSync(victim, join(w.home, "runs"));
    const pruned = await agentport(["prune", "--older-than", "30d"], { cwd: w.proj, env: w.env });
    expect(pruned.stderr).toContain("symbolic link");
    expect(oneLine(pruned.stderr)).toBe(true);
    expect(pruned.code).toBe(5);
    expect(readFileSync(join(victim, "20200101T000000-deadbeef", "keep.txt"), "utf8")).toBe("precious\n");
  });

  test("<home>/extensions/agentport.ts a symlink: the run writes its own file in the link's place, the target is untouched", async () => {
    const w = world();
    const victim = join(w.root, "victim.ts");
    writeFileSync(victim, "// the user's own file\n");
    mkdirSync(join(w.home, "extensions"), { recursive: true });
    const planted = join(w.home, "extensions", "agentport.ts");
    symlinkSync(victim, planted);
    await agentport(["run", "--agent", "pi", "--envelope", "--json", "--progress", "off", "hi"], { cwd: w.proj, env: w.env });
    expect(readFileSync(victim, "utf8")).toBe("// the user's own file\n");
    expect(lstatSync(planted).isSymbolicLink()).toBe(false);
    expect(readFileSync(planted, "utf8")).toContain("report_phase");
  });
});

const bwrap = Bun.which("bwrap");

describe.skipIf(bwrap === null)("prune on a read-only home", () => {
  test("one line naming the folder and the cause, exit 5, nothing removed", async () => {
    const w = world();
    const entry = join(w.home, "runs", "20200101T000000-deadbeef");
    oldFolder(entry);
    const proc = Bun.spawn([bwrap!, "--dev-bind", "/", "/", "--ro-bind", w.home, w.home, BIN, "prune", "--older-than", "30d"], {
      cwd: w.proj,
      env: { ...process.env, ...w.env, NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(stderr).toContain(entry);
    expect(stderr).toContain("EROFS");
    expect(oneLine(stderr)).toBe(true);
    expect(code).toBe(5);
    expect(stdout).toBe("");
    expect(existsSync(join(entry, "keep.txt"))).toBe(true);
  });
});
