/**
 * record-order.ts — the profile for `--bytecode-order` (scripts/bytecode.order):
 * which functions the common starts of the binary run, so the build lays
 * their bytecode out together at the front and a start reads and decodes
 * less of itself (README, Benchmarks: 1–2 MiB less at the peak of a replay).
 *
 *   bun run scripts/record-order.ts      build, run the common starts with
 *                                        BUN_BYTECODE_ORDER_OUT, merge, write
 *                                        scripts/bytecode.order, build again
 *
 * The profile holds hashes of functions' syntax, no source. One from an older
 * build still applies (changed functions go after the recorded ones), so it
 * is recorded again now and then, not on every build. The starts, most common
 * first: `run` of the fake claude and the fake pi (with the keeper and the
 * fake agents they start), `replay`, `sessions`, `--help`, `--version`.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const BIN = join(ROOT, "dist", "agentport");
const OUT = join(ROOT, "scripts", "bytecode.order");
const FIXTURE = join(ROOT, "test", "fixtures", "claude", "b-tools.tools.jsonl");

function build(): void {
  const proc = Bun.spawnSync([process.execPath, "run", join(ROOT, "scripts", "build.ts")], { stdout: "inherit", stderr: "inherit" });
  if (proc.exitCode !== 0) throw new Error("record-order: the build failed");
}

const work = mkdtempSync(join(tmpdir(), "agentport-order-"));
try {
  build();
  for (const name of ["fake-claude", "fake-pi"]) symlinkSync(BIN, join(work, name));
  // The fixture with big tool results inserted before its end: lines from 4 KiB take the scanner's path.
  const fixture = readFileSync(FIXTURE, "utf8").trimEnd().split("\n");
  const result = (i: number) =>
    JSON.stringify({
      type: "user",
      message: {
        role: "user",
        content: [{ tool_use_id: `toolu_big_${i}`, type: "tool_result", content: "const x = 1; // code\n".repeat(1000 * i) }],
      },
      session_id: "s",
    });
  const stream = join(work, "stream.jsonl");
  writeFileSync(stream, `${[...fixture.slice(0, -1), result(1), result(8), fixture.at(-1)].join("\n")}\n`);
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: work,
    NO_COLOR: "1",
    AGENTPORT_HOME: join(work, "home"),
    AGENTPORT_CONFIG: "",
    AGENTPORT_GATEWAY: "",
    PI_CODING_AGENT_DIR: join(work, "pi-agent"),
    AGENTPORT_FAKE_SCENARIO: "tools",
  };
  const starts: [string, string[]][] = [
    ["run-claude", ["run", "--agent", "claude", "--claude-bin", join(work, "fake-claude"), "--progress", "off", "--json", "Do it."]],
    [
      "run-pi",
      ["run", "--agent", "pi", "--pi-bin", join(work, "fake-pi"), "--model", "standin/standin-model", "--direct", "--json", "Do it."],
    ],
    ["replay", ["replay", "--agent", "claude", stream, "--json"]],
    ["sessions", ["sessions", "--json"]],
    ["help", ["--help"]],
    ["version", ["--version"]],
  ];
  // Per start, its own process first, then what it started (keeper, fake agent).
  const profiles: string[] = [];
  for (const [name, args] of starts) {
    const dir = join(work, "order", name);
    mkdirSync(dir, { recursive: true });
    const proc = Bun.spawnSync([BIN, ...args], {
      cwd: work,
      env: { ...env, BUN_BYTECODE_ORDER_OUT: join(dir, "%p.order") },
      stdout: "ignore",
      stderr: "pipe",
    });
    if (proc.exitCode !== 0)
      throw new Error(`record-order: agentport ${args.join(" ")} exited ${proc.exitCode}: ${proc.stderr.toString().slice(-300)}`);
    const own = `${proc.pid}.order`;
    const files = readdirSync(dir).sort((a, b) => (a === own ? -1 : b === own ? 1 : a.localeCompare(b)));
    profiles.push(...files.map((f) => join(dir, f)));
  }
  // One file: every recorded line once, in the order of its first appearance.
  const seen = new Set<string>();
  const lines = ["v2"];
  for (const file of profiles) {
    const [version, ...entries] = readFileSync(file, "utf8").trim().split("\n");
    if (version !== "v2") throw new Error(`record-order: ${file}: unknown profile version ${JSON.stringify(version)}`);
    for (const entry of entries) {
      if (seen.has(entry)) continue;
      seen.add(entry);
      lines.push(entry);
    }
  }
  writeFileSync(OUT, `${lines.join("\n")}\n`);
  console.log(`record-order: ${OUT} (${seen.size} functions and modules from ${profiles.length} processes)`);
  build();
} finally {
  rmSync(work, { recursive: true, force: true });
}
