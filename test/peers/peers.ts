// Where the e2e suites find the real agent CLIs they drive. codex, gemini and
// opencode are pinned in test/peers/package.json (their own lockfile and node_modules:
// hundreds of MB kept out of agentport's install); pi and claude still come
// from the root devDependencies. A missing peer is one line naming it and the
// command that installs it, and its suite is skipped (or, with
// AGENTPORT_INSTALL_PEERS=1, installed on first use).
import { existsSync } from "node:fs";
import { join } from "node:path";

const PEERS = import.meta.dir;
const ROOT = join(PEERS, "..", "..");

export type PeerName = "codex" | "gemini" | "opencode" | "pi" | "claude" | "claude-acp" | "acpx";

interface PeerSpec {
  /** The npm package and its pinned version. */
  pkg: string;
  bin: string;
  /** Where it is installed from. */
  dir: string;
}

const SPECS: Record<PeerName, PeerSpec> = {
  codex: { pkg: "@openai/codex@0.169.0", bin: "codex", dir: PEERS },
  gemini: { pkg: "@google/gemini-cli@0.61.0", bin: "gemini", dir: PEERS },
  opencode: { pkg: "opencode-ai@1.18.33", bin: "opencode", dir: PEERS },
  pi: { pkg: "@mariozechner/pi-coding-agent@0.73.1", bin: "pi", dir: ROOT },
  claude: { pkg: "@anthropic-ai/claude-code@2.1.197", bin: "claude", dir: ROOT },
  // An npm ACP adapter: Claude Code (its Agent SDK's own build) behind ACP.
  "claude-acp": { pkg: "@agentclientprotocol/claude-agent-acp@0.101.0", bin: "claude-agent-acp", dir: PEERS },
  // A third-party ACP client: drives `agentport acp` as its agent.
  acpx: { pkg: "acpx@0.19.1", bin: "acpx", dir: PEERS },
};

export interface Peer {
  name: PeerName;
  /** The binary's path, or null when it is not installed. */
  bin: string | null;
  /** One line: which peer is missing and how to install it (empty when found). */
  missing: string;
}

/** The installed binary of a pinned peer; `$AGENTPORT_PEER_<NAME>` overrides the location. */
export function peer(name: PeerName): Peer {
  const spec = SPECS[name];
  const override = process.env[`AGENTPORT_PEER_${name.toUpperCase().replace("-", "_")}`];
  const bin = override || join(spec.dir, "node_modules", ".bin", spec.bin);
  if (existsSync(bin)) return { name, bin, missing: "" };
  const install = spec.dir === PEERS ? "(cd test/peers && npm install)" : "npm ci";
  return { name, bin: null, missing: `${name}: ${spec.pkg} is not installed (looked for ${bin}); install it with ${install}` };
}

/**
 * The peer's binary, or null after saying on stderr which is missing and how
 * to install it. With AGENTPORT_INSTALL_PEERS=1 a missing test/peers package
 * is installed first (`npm install` there, its own node_modules: see .ci/run for why not `npm ci`).
 * With AGENTPORT_REQUIRE_PEERS=1 (CI) a missing peer fails its suite instead of skipping it.
 */
export function peerOrSkip(name: PeerName): string | null {
  let found = peer(name);
  if (found.bin === null && SPECS[name].dir === PEERS && process.env.AGENTPORT_INSTALL_PEERS === "1") {
    Bun.spawnSync(["npm", "install", "--no-audit", "--no-fund"], { cwd: PEERS, stdout: "inherit", stderr: "inherit" });
    found = peer(name);
  }
  if (found.bin === null && process.env.AGENTPORT_REQUIRE_PEERS === "1") {
    throw new Error(`the ${name} end-to-end suite is required ($AGENTPORT_REQUIRE_PEERS, as CI sets it): ${found.missing}`);
  }
  if (found.bin === null) process.stderr.write(`SKIPPING the ${name} end-to-end suite: ${found.missing}\n`);
  return found.bin;
}
