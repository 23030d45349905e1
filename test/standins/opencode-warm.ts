// `bun test/standins/opencode-warm.ts <opencode> <template>`: build the warm opencode home
// that ./opencode-home.ts copies into each world. Run as its own process (opencodeEnv is
// synchronous). A fresh home costs every opencode start ~6 s: the database and its migrations,
// and a background `npm install` of @opencode-ai/plugin into the config folder (from the
// registry, each time, while the agent runs). Here `opencode serve` does both once, with no
// session: one directory's instance (GET /session) loads the config and starts the install;
// the server is stopped once the install is in place (or after a minute without it, offline).
// What is kept: the config folder without opencode.json (each world writes its own, with its
// stand-in's URL) and the database. Not the log, the locks, npm's cache, nor the temp folder.
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { opencodeDirs } from "./opencode.ts";

const [opencode, template] = process.argv.slice(2);
if (!opencode || !template) throw new Error("usage: bun opencode-warm.ts <opencode> <template>");

const building = `${template}.building-${process.pid}`;
rmSync(building, { recursive: true, force: true });
const { env, xdg, root } = opencodeDirs(building, "http://127.0.0.1:9/v1");
const project = join(building, "warm");
mkdirSync(project, { recursive: true });

const server = Bun.spawn([opencode, "serve", "--hostname", "127.0.0.1", "--port", "0"], {
  cwd: project,
  env,
  stdin: "ignore",
  stdout: "pipe",
  stderr: "pipe",
});
try {
  const url = await listening(server.stdout);
  const listed = await fetch(`${url}/session?directory=${encodeURIComponent(project)}`);
  if (!listed.ok) throw new Error(`opencode serve: GET /session answered ${listed.status}`);
  const installed = join(xdg.XDG_CONFIG_HOME, "opencode", "node_modules", "@opencode-ai", "plugin", "package.json");
  const lock = join(xdg.XDG_CONFIG_HOME, "opencode", "package-lock.json");
  const until = performance.now() + 60_000;
  while (!(existsSync(installed) && existsSync(lock)) && performance.now() < until) await Bun.sleep(100);
} finally {
  server.kill("SIGTERM");
  await server.exited;
}

for (const gone of [
  join(xdg.XDG_CONFIG_HOME, "opencode", "opencode.json"),
  join(xdg.XDG_DATA_HOME, "opencode", "log"),
  join(xdg.XDG_STATE_HOME, "opencode", "locks"),
  join(root, "tmp"),
  join(root, "home", ".npm"),
  project,
])
  rmSync(gone, { recursive: true, force: true });
mkdirSync(join(root, "tmp"));
// Read-only files: each world hard-links the installed packages, so none can change what another sees.
Bun.spawnSync(["find", join(root, "config", "opencode", "node_modules"), "-type", "f", "-exec", "chmod", "a-w", "{}", "+"]);
mkdirSync(dirname(template), { recursive: true });
try {
  renameSync(root, template);
} catch {
  // Another test process put its own in place first: same opencode, same home.
}
rmSync(building, { recursive: true, force: true });

/** The server's URL, from its `opencode server listening on http://…` line. */
async function listening(stdout: ReadableStream<Uint8Array>): Promise<string> {
  let seen = "";
  const decoder = new TextDecoder();
  for await (const chunk of stdout) {
    seen += decoder.decode(chunk, { stream: true });
    const m = seen.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    if (m) return m[1]!;
  }
  throw new Error(`opencode serve exited before it listened: ${seen}`);
}
