// Compile agentport into one self-contained binary.
//
//   bun run scripts/build.ts [OUT]     dist/agentport (or OUT), for this machine
//   bun run scripts/build.ts --all     the release set, cross-compiled offline:
//                                        dist/agentport-linux-x64
//                                        dist/agentport-linux-arm64
//                                        dist/agentport-linux-x64-musl
//                                        dist/agentport-linux-arm64-musl
//                                        dist/agentport-darwin-arm64
//                                        dist/agentport-darwin-x64
//                                        dist/SHA256SUMS
//   then scripts/pack.ts lays out and packs the npm packages and the release archives from them.
//
// The binary must not read the .env or bunfig.toml of whatever folder it is
// dropped into, hence the two --no-compile-autoload flags.
//
// --all never lets `bun build` download a runtime from GitHub: each target's
// Bun comes from its npm package (@oven/bun-<os>-<arch>, the same version as
// the `bun` devDependency), given with --compile-executable-path. Those
// packages carry os/cpu constraints, so they cannot be devDependencies; they
// are fetched with `npm pack` (the npm registry and npm's cache only) into
// node_modules/.cache/agentport-bun/ and unpacked there once. The host's own
// Bun is used for its own target when it is that very build.
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import pkg from "../package.json" with { type: "json" };

const ROOT = resolve(import.meta.dir, "..");
const ENTRY = "src/cli/main.ts";
// --bytecode: precompiled, the binary starts in about half the time (no top-level await in src/cli/main.ts).
// --splitting (ESM only): each command, the keeper and the fake agents are chunks inside the binary,
// loaded on their first import, so a start reads and decodes only the code it runs (README, Benchmarks).
const BASE_FLAGS = [
  "--compile",
  "--bytecode",
  "--splitting",
  "--format=esm",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  "--minify-syntax",
];

interface Target {
  /** dist/agentport-<name> */
  name: string;
  /** bun build --target */
  bunTarget: string;
  /** The npm package holding that platform's bun. */
  npm: string;
  os: NodeJS.Platform;
  arch: string;
  /** Linux builds for musl (Alpine) instead of glibc. */
  musl?: true;
}

export const TARGETS: Target[] = [
  { name: "linux-x64", bunTarget: "bun-linux-x64", npm: "@oven/bun-linux-x64", os: "linux", arch: "x64" },
  { name: "linux-arm64", bunTarget: "bun-linux-arm64", npm: "@oven/bun-linux-aarch64", os: "linux", arch: "arm64" },
  { name: "linux-x64-musl", bunTarget: "bun-linux-x64-musl", npm: "@oven/bun-linux-x64-musl", os: "linux", arch: "x64", musl: true },
  {
    name: "linux-arm64-musl",
    bunTarget: "bun-linux-arm64-musl",
    npm: "@oven/bun-linux-aarch64-musl",
    os: "linux",
    arch: "arm64",
    musl: true,
  },
  { name: "darwin-arm64", bunTarget: "bun-darwin-arm64", npm: "@oven/bun-darwin-aarch64", os: "darwin", arch: "arm64" },
  { name: "darwin-x64", bunTarget: "bun-darwin-x64", npm: "@oven/bun-darwin-x64", os: "darwin", arch: "x64" },
];

function fail(message: string): never {
  console.error(`build: ${message}`);
  process.exit(1);
}

/** The Bun version to build with: the exact `bun` devDependency. */
function bunVersion(): string {
  const v = (pkg.devDependencies as Record<string, string>).bun;
  if (!v || !/^\d+\.\d+\.\d+$/.test(v)) fail(`package.json devDependencies.bun must be an exact version, got ${JSON.stringify(v)}`);
  return v;
}

// The functions the common starts run, laid out first (scripts/record-order.ts records it).
const ORDER = join(ROOT, "scripts", "bytecode.order");

function compile(out: string, extra: string[] = []): void {
  const order = existsSync(ORDER) ? [`--bytecode-order=${ORDER}`] : [];
  const proc = Bun.spawnSync([process.execPath, "build", ...BASE_FLAGS, ...order, ...extra, ENTRY, "--outfile", out], {
    stdout: "inherit",
    stderr: "inherit",
    cwd: ROOT,
  });
  if (proc.exitCode !== 0) fail(`bun build failed with exit code ${proc.exitCode} (${out})`);
}

/** A target's bun executable: the host's when it is that build, else unpacked from the npm package. */
function runtimeFor(target: Target, version: string, cacheDir: string): string {
  if (process.platform === target.os && process.arch === target.arch && Bun.version === version && (target.musl ?? false) === isMusl())
    return process.execPath;
  const dir = join(cacheDir, `${basename(target.npm)}-${version}`);
  const exe = join(dir, "package", "bin", "bun");
  if (existsSync(exe) && statSync(exe).size > 1_000_000) return exe;
  mkdirSync(dir, { recursive: true });
  const spec = `${target.npm}@${version}`;
  console.error(`build: fetching ${spec} with npm pack (npm registry / npm cache)`);
  const npm = Bun.which("npm") ?? fail("npm not found on PATH: it is needed to fetch the per-platform Bun packages");
  const packed = Bun.spawnSync([npm, "pack", spec, "--silent", "--pack-destination", dir], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  if (packed.exitCode !== 0) fail(`npm pack ${spec} failed: ${packed.stderr.toString().trim().slice(-400)}`);
  const tgz = packed.stdout.toString().trim().split("\n").pop()?.trim() ?? "";
  const tgzPath = join(dir, tgz);
  if (!tgz || !existsSync(tgzPath)) fail(`npm pack ${spec} did not say which file it wrote (${JSON.stringify(tgz)})`);
  const untar = Bun.spawnSync(["tar", "xzf", tgzPath, "-C", dir], { stdout: "inherit", stderr: "inherit" });
  if (untar.exitCode !== 0) fail(`tar could not unpack ${tgzPath}`);
  rmSync(tgzPath);
  if (!existsSync(exe)) fail(`${spec} holds no package/bin/bun`);
  chmodSync(exe, 0o755);
  return exe;
}

function isMusl(): boolean {
  if (process.platform !== "linux") return false;
  const report = (process as unknown as { report?: { getReport(): { header?: { glibcVersionRuntime?: string } } } }).report;
  return report !== undefined && !report.getReport().header?.glibcVersionRuntime;
}

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function buildAll(): void {
  const started = performance.now();
  const version = bunVersion();
  if (Bun.version !== version) console.error(`build: warning: building with bun ${Bun.version}, the devDependency is ${version}`);
  const dist = join(ROOT, "dist");
  const cache = join(ROOT, "node_modules", ".cache", "agentport-bun");
  mkdirSync(dist, { recursive: true });
  const sums: string[] = [];
  for (const target of TARGETS) {
    const exe = runtimeFor(target, version, cache);
    const out = join(dist, `agentport-${target.name}`);
    const tmp = `${out}.tmp`;
    rmSync(tmp, { force: true });
    compile(tmp, [`--target=${target.bunTarget}`, `--compile-executable-path=${exe}`]);
    renameSync(tmp, out);
    const size = statSync(out).size;
    sums.push(`${sha256(out)}  ${basename(out)}`);
    console.error(`build: dist/${basename(out)} (${(size / 1024 / 1024).toFixed(1)} MiB, ${target.bunTarget}, bun ${version})`);
  }
  writeFileSync(join(dist, "SHA256SUMS"), `${sums.join("\n")}\n`);
  console.error(`build: dist/SHA256SUMS (agentport ${pkg.version}) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const args = process.argv.slice(2);
if (args.includes("--all")) {
  buildAll();
} else {
  const out = args.find((a) => !a.startsWith("-")) ?? "dist/agentport";
  compile(out);
  console.error(`build: ${out} (agentport ${pkg.version})`);
}
