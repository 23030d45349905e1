// An arm that climbs out of its workspace: the fake pi's write tool with a
// relative path (`../../../../../repo/…`) from the workspace in the run folder
// into the user's checkout, writing an fsmonitor command into its .git/config
// and a new file beside its tracked ones. Not isolated (--no-isolate), the
// writes land: agentport says exactly what changed, in harvest.json too, exits
// 6, never says "unchanged", and none of its own git calls runs the command.
// Isolated (bwrap), the writes fail and the checkout is as found.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { bon, box, envelope, MODEL, PRIME, readHarvest, sh, useFakePi, type Box } from "./bon-fixture.ts";
import { bwrapWorks } from "./isolation.ts";

useFakePi();

/** From the workspace (<home>/runs/<run>/workspaces/shared) up to the box's root, where the checkout is. */
const UP = "../../../../../repo";

const hostileConfig = (mark: string) => `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch ${mark}; echo"\n`;

const climber = (mark: string) => [
  { writeFile: { path: `${UP}/.git/config`, content: hostileConfig(mark) } },
  { writeFile: { path: `${UP}/planted.txt`, content: "from the arm\n" } },
  // A test of the arm's that its gate runs: the arm's code, run by agentport.
  { writeFile: { path: "check.sh", content: `echo from the gate > ${UP}/gate-planted.txt\n` } },
  { writeFile: { path: "answer.txt", content: "42\n" } },
  envelope("Wrote 42.", ["answer.txt"]),
];
const green = [{ writeFile: { path: "answer.txt", content: "42\n" } }, envelope("Wrote 42.", ["answer.txt"])];

/** The checkout's status, read without its config's commands. */
const safeStatus = (repo: string) =>
  sh(repo, "git", "-c", "core.fsmonitor=false", "status", "--porcelain", "--untracked-files=all").split("\n").filter(Boolean);

/** One pi for the batch, one turn after the other: the prime, the climber, a green arm. */
const batch = (mark: string) => ({ AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [PRIME, climber(mark), green] }) });

describe("an arm that writes into the user's checkout through a relative path", () => {
  test("not isolated: every change is named on stderr and in harvest.json, exit 6, never 'unchanged', no command of the checkout runs", async () => {
    const b = box();
    const mark = join(b.root, "fsmonitor-ran");
    const configBefore = readFileSync(join(b.repo, ".git", "config"), "utf8");
    const { code, stdout, stderr } = await bon(
      b,
      [b.spec, "--arms", "2", "--gate", "grep -qx 42 answer.txt", "--json", "--no-isolate", ...MODEL],
      batch(mark),
    );
    // The attack landed (nothing stopped it without isolation)…
    expect(readFileSync(join(b.repo, ".git", "config"), "utf8")).not.toBe(configBefore);
    expect(existsSync(join(b.repo, "planted.txt"))).toBe(true);
    // …and agentport says so, line by line, and fails.
    expect(code).toBe(6);
    expect(stderr).not.toContain("unchanged");
    expect(stderr).toMatch(/bon: your checkout changed during the batch/);
    expect(stderr).toMatch(/^ {2}\.git\/config: changed$/m);
    expect(stderr).toMatch(/^ {2}planted\.txt: untracked \(new\)$/m);
    const h = readHarvest(stdout);
    expect(h.checkout.changed).toEqual(expect.arrayContaining([".git/config: changed", "planted.txt: untracked (new)"]));
    expect(h.checkout.changed).toHaveLength(2);
    expect(h.isolated).toBe(false);
    const onDisk = JSON.parse(readFileSync(join(h.run_dir, "harvest.json"), "utf8"));
    expect(onDisk.checkout.changed).toEqual(h.checkout.changed);
    // agentport's own git (the snapshot's status included) never ran the fsmonitor.
    expect(existsSync(mark)).toBe(false);
    expect(safeStatus(b.repo)).toEqual(["?? planted.txt", "?? specs/task.md"]);
  }, 60_000);

  test("a batch that leaves the checkout alone says it is unchanged, and harvest.json says so", async () => {
    const b = box();
    const { code, stdout, stderr } = await bon(
      b,
      [b.spec, "--arms", "2", "--gate", "grep -qx 42 answer.txt", "--json", "--no-isolate", ...MODEL],
      {
        AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [PRIME, green, green] }),
      },
    );
    expect(code).toBe(0);
    expect(stderr).toContain("your checkout is unchanged");
    expect(readHarvest(stdout).checkout).toEqual({ checked: true, changed: [] });
  }, 60_000);

  test.if(bwrapWorks())(
    "isolated (the default where bwrap works): the writes fail, the arm's code its gate runs too, the checkout is as found, harvest.json says isolated",
    async () => {
      const b = box();
      const mark = join(b.root, "fsmonitor-ran");
      const configBefore = readFileSync(join(b.repo, ".git", "config"), "utf8");
      // The workspace's git works inside (it borrows the checkout's objects, read-only).
      const gate = ["--gate", "test ! -f check.sh || sh check.sh; git cat-file -e HEAD^{commit} && grep -qx 42 answer.txt"];
      const { code, stdout, stderr } = await bon(b, [b.spec, "--arms", "2", ...gate, "--json", ...MODEL], batch(mark));
      expect(readFileSync(join(b.repo, ".git", "config"), "utf8")).toBe(configBefore);
      expect(existsSync(join(b.repo, "planted.txt"))).toBe(false);
      expect(existsSync(join(b.repo, "gate-planted.txt"))).toBe(false);
      const h = readHarvest(stdout);
      expect(h.isolated).toBe(true);
      expect(h.checkout).toEqual({ checked: true, changed: [] });
      expect(stderr).toContain("your checkout is unchanged");
      expect(code).toBe(0);
      expect(existsSync(mark)).toBe(false);
    },
    60_000,
  );
});

describe("where bwrap cannot work", () => {
  /** A PATH with every command of /usr/bin and /bin but bwrap. */
  function pathWithoutBwrap(b: Box): string {
    const dir = join(b.root, "no-bwrap");
    mkdirSync(dir);
    for (const from of ["/usr/bin", "/bin"]) {
      for (const name of readdirSync(from))
        if (name !== "bwrap" && !existsSync(join(dir, name))) symlinkSync(join(from, name), join(dir, name));
    }
    return dir;
  }

  test("bon says in one line that its arms are not isolated, runs as before, and harvest.json records it; --isolate is exit 5", async () => {
    const b = box();
    const PATH = pathWithoutBwrap(b);
    const scenario = { AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [PRIME, green, green] }), PATH };
    const ran = await bon(b, [b.spec, "--arms", "2", "--gate", "grep -qx 42 answer.txt", "--json", ...MODEL], scenario);
    expect(ran.code).toBe(0);
    expect(ran.stderr.split("\n").filter((l) => l.includes("NOT isolated"))).toEqual([
      "bon: the arms are NOT isolated: bwrap is not installed; install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap) (--no-isolate to say you know)",
    ]);
    expect(readHarvest(ran.stdout).isolated).toBe(false);
    const insisted = await bon(b, [b.spec, "--arms", "2", "--isolate", ...MODEL], scenario);
    expect(insisted.code).toBe(5);
    expect(insisted.stderr.trim().split("\n")).toHaveLength(1);
    expect(insisted.stderr).toContain("--isolate: bwrap is not installed");
  }, 60_000);
});
