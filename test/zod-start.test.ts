// zod stays out of a plain `agentport run` (issue #16): loading it and
// building schemas cost several ms of CPU at start. agentport runs from
// source, with a preload that lists, when the process exits, the zod files
// it loaded; an eager `z.object(...)` at the top of any file on the run path
// (or a lazySchema used at load time) would put them in that list.
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeProject, ROOT, type FakeProject } from "./helpers.ts";

const PROBE = `import { writeFileSync } from "node:fs";
process.on("exit", () => {
  const zod = Object.keys(require.cache).filter((path) => path.includes("/node_modules/zod/"));
  writeFileSync(process.env.ZOD_PROBE_OUT, JSON.stringify(zod));
});
`;

let project: FakeProject;
let probe: string;

beforeAll(() => {
  project = fakeProject("agentport-zod-start-");
  probe = join(project.root, "zod-probe.ts");
  writeFileSync(probe, PROBE);
});

/** `agentport run --agent claude` from source against the fake claude; the zod files it loaded. */
async function run(extra: string[]): Promise<{ code: number; stderr: string; verdict: { ok: boolean }; zod: string[] }> {
  const out = join(project.root, `zod-${extra.length}.json`);
  const argv = [
    process.execPath,
    "--preload",
    probe,
    join(ROOT, "src", "cli", "main.ts"),
    "run",
    "--agent",
    "claude",
    "--claude-bin",
    project.env.AGENTPORT_CLAUDE_BIN as string,
    "--progress",
    "off",
    "--json",
    ...extra,
    "hi",
  ];
  const proc = Bun.spawn(argv, {
    cwd: project.proj,
    env: { ...process.env, ...project.env, NO_COLOR: "1", AGENTPORT_FAKE_SCENARIO: "tools", ZOD_PROBE_OUT: out },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  let verdict: { ok: boolean };
  try {
    verdict = JSON.parse(stdout);
  } catch {
    throw new Error(`no verdict on stdout (exit ${code}): ${stdout.slice(0, 300)} / ${stderr.slice(0, 500)}`);
  }
  return { code, stderr, verdict, zod: JSON.parse(readFileSync(out, "utf8")) as string[] };
}

describe("zod at the start of agentport run", () => {
  test("a plain run (no agentport.json, no envelope) loads no zod", async () => {
    const { code, stderr, verdict, zod } = await run([]);
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
    expect(verdict.ok).toBe(true);
    expect(zod).toEqual([]);
  });

  test("a run that checks an envelope loads it (the probe sees zod)", async () => {
    const { zod } = await run(["--envelope"]);
    expect(zod.some((path) => path.endsWith("/node_modules/zod/index.js"))).toBe(true);
  });

  test("without a provider the run command's modules load, and the first schema used names what to import", async () => {
    const script = `await import(${JSON.stringify(join(ROOT, "src", "cli", "commands", "run.ts"))});
const { VerdictSchema } = await import(${JSON.stringify(join(ROOT, "src", "core", "verdict.ts"))});
console.log("loaded");
VerdictSchema.safeParse({});`;
    const proc = Bun.spawn([process.execPath, "-e", script], { cwd: project.root, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(stdout).toBe("loaded\n");
    expect(code).toBe(1);
    expect(stderr).toContain("zod was never provided; load src/io/zod.ts first");
  });
});
