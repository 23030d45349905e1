// The npm package end to end, with real processes: scripts/pack.ts packs the
// main package and this machine's platform package from the compiled binary,
// a Verdaccio on loopback (no uplinks: nothing leaves the machine) takes them,
// and a clean folder installs `agentport` from it with no Bun on PATH; then
// `npx agentport selftest`, the launcher's exit codes and signals, the library
// under Node and Bun, its types, and install.sh against the release archive.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, ROOT, tempDir } from "./helpers.ts";
import pkg from "../package.json" with { type: "json" };

const glibc = Boolean((process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime);
const HERE = process.platform === "linux" && process.arch === "x64" && glibc;
const PLATFORM = "linux-x64";
const VERSION = pkg.version;
const FIXTURE = join(ROOT, "test", "fixtures", "claude", "b-tools.tools.jsonl");

const tmp = tempDir("agentport-package-");
const out = join(tmp, "out");
const app = join(tmp, "app");
let registry = "";
let verdaccio: ReturnType<typeof Bun.spawn> | null = null;
/** Node and npm, and no Bun: what a user without Bun has. */
const BARE_PATH = "/usr/bin:/bin";

function npmEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: BARE_PATH,
    HOME: join(tmp, "home"),
    NPM_CONFIG_USERCONFIG: join(tmp, "npmrc"),
    NPM_CONFIG_CACHE: join(tmp, "npm-cache"),
    NPM_CONFIG_REGISTRY: registry,
    NPM_CONFIG_UPDATE_NOTIFIER: "false",
    NPM_CONFIG_AUDIT: "false",
    NPM_CONFIG_FUND: "false",
    ...extra,
  };
}

function sh(argv: string[], cwd: string, env: Record<string, string>) {
  const proc = Bun.spawnSync(argv, { cwd, env, stdout: "pipe", stderr: "pipe" });
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

const mib = (path: string) => statSync(path).size / 1024 / 1024;

beforeAll(async () => {
  if (!HERE) return;
  // This machine's binary, as build --all names it.
  const bins = join(tmp, "bins");
  mkdirSync(bins);
  copyFileSync(BIN, join(bins, `agentport-${PLATFORM}`));
  const packed = sh(
    [process.execPath, "run", join(ROOT, "scripts", "pack.ts"), "--from", bins, "--out", out, "--targets", PLATFORM],
    ROOT,
    { ...process.env } as Record<string, string>,
  );
  if (packed.code !== 0) throw new Error(`pack failed: ${packed.stderr}`);

  const storage = join(tmp, "storage");
  mkdirSync(storage);
  const config = join(tmp, "verdaccio.yaml");
  writeFileSync(
    config,
    [
      `storage: ${storage}`,
      "auth:",
      `  htpasswd: { file: ${join(tmp, "htpasswd")}, max_users: 1 }`,
      "uplinks: {}",
      "packages:",
      "  '**': { access: $all, publish: $authenticated }",
      "max_body_size: 300mb",
      "log: { type: stdout, format: json, level: warn }",
      "",
    ].join("\n"),
  );
  const port = (() => {
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const free = probe.port;
    probe.stop(true);
    return free;
  })();
  registry = `http://127.0.0.1:${port}/`;
  verdaccio = Bun.spawn(
    ["node", join(ROOT, "node_modules", "verdaccio", "bin", "verdaccio"), "--config", config, "--listen", `127.0.0.1:${port}`],
    { cwd: tmp, stdout: "ignore", stderr: "ignore", env: { PATH: BARE_PATH, HOME: join(tmp, "home") } },
  );
  for (let i = 0; i < 150; i++) {
    if (
      await fetch(`${registry}-/ping`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await Bun.sleep(100);
  }
  // A throwaway user: the token publishes.
  const made = await fetch(`${registry}-/user/org.couchdb.user:ci`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "ci", password: "throwaway-password" }),
  });
  const { token } = (await made.json()) as { token: string };
  writeFileSync(join(tmp, "npmrc"), `//127.0.0.1:${port}/:_authToken=${token}\n`);
}, 180_000);

afterAll(() => {
  verdaccio?.kill();
  if (!process.env.AGENTPORT_KEEP_TMP) rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(!HERE)("the npm package", () => {
  test("pack: a small main package, one package per platform, release archives with SHA256SUMS", () => {
    const packages = readdirSync(join(out, "packages")).sort();
    expect(packages).toEqual([`agentport-${VERSION}.tgz`, `agentport-${PLATFORM}-${VERSION}.tgz`]);
    const main = JSON.parse(readFileSync(join(out, "npm", "agentport", "package.json"), "utf8"));
    expect(main).toMatchObject({ name: "agentport", license: "MIT", bin: { agentport: "bin/agentport.cjs" }, engines: { node: ">=20" } });
    expect(main.private).toBeUndefined();
    expect(Object.keys(main.optionalDependencies)).toContain(`@agentport/${PLATFORM}`);
    expect(JSON.parse(readFileSync(join(out, "npm", PLATFORM, "package.json"), "utf8"))).toMatchObject({
      os: ["linux"],
      cpu: ["x64"],
      libc: ["glibc"],
    });
    expect(mib(join(out, "packages", `agentport-${VERSION}.tgz`))).toBeLessThan(1);
    const sums = readFileSync(join(out, "release", "SHA256SUMS"), "utf8");
    expect(sums).toMatch(new RegExp(`^[0-9a-f]{64}  agentport-${VERSION}-${PLATFORM}\\.tar\\.gz\\n$`));
    console.error(
      `sizes: main ${(mib(join(out, "packages", `agentport-${VERSION}.tgz`)) * 1024).toFixed(0)} KiB, @agentport/${PLATFORM} ${mib(join(out, "packages", `agentport-${PLATFORM}-${VERSION}.tgz`)).toFixed(1)} MiB packed, ${mib(BIN).toFixed(1)} MiB unpacked`,
    );
  });

  test("publish to the local registry, install into a clean folder with no Bun, npx agentport selftest", () => {
    for (const file of readdirSync(join(out, "packages"))) {
      const published = sh(["npm", "publish", join(out, "packages", file)], tmp, npmEnv());
      expect(published.stderr).not.toContain("ERR");
      expect(published.code).toBe(0);
    }
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    expect(sh(["sh", "-c", "command -v bun"], app, npmEnv()).code).not.toBe(0);
    const started = performance.now();
    const installed = sh(["npm", "install", "--registry", registry, "agentport"], app, npmEnv());
    const seconds = (performance.now() - started) / 1000;
    expect(installed.code).toBe(0);
    console.error(`install: ${seconds.toFixed(1)} s from the local registry`);
    expect(existsSync(join(app, "node_modules", "@agentport", PLATFORM, "bin", "agentport"))).toBe(true);

    const version = sh(["npx", "agentport", "--version"], app, npmEnv());
    expect(version.stdout.trim()).toBe(VERSION);
    const selftest = sh(["npx", "agentport", "selftest"], app, npmEnv());
    expect(selftest.stderr).not.toContain("not installed");
    expect(selftest.code).toBe(0);
  }, 120_000);

  test("npm i -g agentport: the command on the global PATH", () => {
    const global = join(tmp, "global");
    const installed = sh(["npm", "install", "-g", "--prefix", global, "agentport"], tmp, npmEnv());
    expect(installed.code).toBe(0);
    expect(sh(["agentport", "--version"], tmp, npmEnv({ PATH: `${join(global, "bin")}:${BARE_PATH}` })).stdout.trim()).toBe(VERSION);
  }, 120_000);

  test("the launcher passes the exit code, stdout and stderr", () => {
    const bad = sh([join(app, "node_modules", ".bin", "agentport"), "schema", "nope"], app, npmEnv());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('no schema named "nope"');
    const listed = sh([join(app, "node_modules", ".bin", "agentport"), "schema"], app, npmEnv());
    expect(listed.stdout).toContain("verdict");
  });

  /** A hanging fake claude run through the launcher (in a process group of its own: setsid), once it has started. */
  async function hangingRun() {
    const fakes = join(tmp, "fakes");
    mkdirSync(fakes, { recursive: true });
    if (!existsSync(join(fakes, "fake-claude")))
      symlinkSync(join(app, "node_modules", "@agentport", PLATFORM, "bin", "agentport"), join(fakes, "fake-claude"));
    const env = npmEnv({
      AGENTPORT_HOME: join(tmp, "state"),
      AGENTPORT_CLAUDE_BIN: join(fakes, "fake-claude"),
      AGENTPORT_FAKE_SCENARIO: "hang",
      AGENTPORT_CONFIG: "",
    });
    const proc = Bun.spawn(
      ["setsid", join(app, "node_modules", ".bin", "agentport"), "run", "--agent", "claude", "--json", "--progress", "json", "go"],
      { cwd: app, env, stdout: "pipe", stderr: "pipe" },
    );
    const reader = proc.stderr.getReader();
    let seen = "";
    while (!seen.includes('"kind":"started"')) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    return proc;
  }

  test("a SIGTERM to the launcher reaches the run: it ends as aborted, and the launcher as agentport did", async () => {
    const proc = await hangingRun();
    proc.kill("SIGTERM");
    const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(JSON.parse(stdout).status).toBe("aborted");
    expect(code).toBe(130);
  }, 60_000);

  test("Ctrl-C (SIGINT to the whole group) reaches agentport once: a graceful abort with its verdict, not an exit at once", async () => {
    const proc = await hangingRun();
    process.kill(-proc.pid, "SIGINT");
    const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(stdout).not.toBe("");
    expect(JSON.parse(stdout).status).toBe("aborted");
    expect(code).toBe(130);
  }, 60_000);

  test("the library from the installed tarball: replay under Node and Bun, run under Node", () => {
    const script = [
      'import { readFileSync } from "node:fs";',
      'import { replay, run, schemas, SCHEMA_VERSION } from "agentport";',
      `const verdict = await replay(readFileSync(${JSON.stringify(FIXTURE)}), "claude");`,
      `const lines = await replay(readFileSync(${JSON.stringify(FIXTURE)}, "utf8").split("\\n").filter(Boolean), "claude");`,
      "const ran = process.argv[2] ? await run({ agent: 'claude', prompt: 'Say hello', env: { AGENTPORT_CLAUDE_BIN: process.argv[3], AGENTPORT_HOME: process.argv[4], AGENTPORT_CONFIG: '' } }) : null;",
      "console.log(JSON.stringify({ status: verdict.status, text: verdict.text, same: lines.text === verdict.text, version: SCHEMA_VERSION, schemas: Object.keys(schemas), ran: ran && { status: ran.verdict.status, code: ran.exitCode } }));",
    ].join("\n");
    writeFileSync(join(app, "check.mjs"), script);
    // run() without `bin`: the binary of the installed platform package.
    const node = sh(["node", "check.mjs", "run", join(tmp, "fakes", "fake-claude"), join(tmp, "state")], app, npmEnv());
    expect(node.stderr).toBe("");
    const fromNode = JSON.parse(node.stdout);
    expect(fromNode).toMatchObject({ status: "completed", same: true, version: 1, ran: { status: "completed", code: 0 } });
    expect(fromNode.schemas).toEqual(["verdict", "progress", "harvest", "session", "phase", "task", "result", "worker", "queue", "config"]);
    const bun = sh([process.execPath, "check.mjs"], app, npmEnv());
    expect(JSON.parse(bun.stdout)).toMatchObject({ status: "completed", text: fromNode.text, same: true });
  }, 120_000);

  test("the library's types ship with it: a strict TypeScript consumer checks", () => {
    writeFileSync(
      join(app, "check.ts"),
      [
        'import { replay, type Verdict } from "agentport";',
        'const v: Verdict = await replay("", "pi");',
        "const status: string = v.status;",
        "export { status };",
        "",
      ].join("\n"),
    );
    const tsc = sh(
      [
        process.execPath,
        join(ROOT, "node_modules", "typescript", "bin", "tsc"),
        "--noEmit",
        "--strict",
        "--skipLibCheck",
        "--module",
        "nodenext",
        "--target",
        "es2022",
        "--types",
        "node",
        "--typeRoots",
        join(ROOT, "node_modules", "@types"),
        "check.ts",
      ],
      app,
      npmEnv(),
    );
    expect(tsc.stdout).toBe("");
    expect(tsc.code).toBe(0);
  }, 120_000);

  test("install.sh installs the release archive after checking its sum, and refuses a tampered one", () => {
    const release = join(out, "release");
    const ok = sh(["sh", join(release, "install.sh"), "--from", release, "--prefix", join(tmp, "prefix")], tmp, npmEnv());
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(sh([join(tmp, "prefix", "bin", "agentport"), "--version"], tmp, npmEnv()).stdout.trim()).toBe(VERSION);

    const bad = join(tmp, "bad-release");
    mkdirSync(bad);
    for (const f of readdirSync(release)) copyFileSync(join(release, f), join(bad, f));
    const archive = join(bad, `agentport-${VERSION}-${PLATFORM}.tar.gz`);
    writeFileSync(archive, Buffer.concat([readFileSync(archive), Buffer.from("x")]));
    const refused = sh(["sh", join(bad, "install.sh"), "--from", bad, "--prefix", join(tmp, "prefix2")], tmp, npmEnv());
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain("does not match SHA256SUMS");
    expect(existsSync(join(tmp, "prefix2", "bin", "agentport"))).toBe(false);
  }, 60_000);
});
