// A best-of-N world for the real opencode against the chat-completions
// stand-in, shared by test/bon-opencode.test.ts and
// scripts/bench-bon-opencode.ts: a git repository with a spec
// (./spec-repo.ts), and a scripted model. The prime reads the spec with opencode's bash tool and ends with an
// envelope (a fenced JSON block) naming no file; each arm writes
// `answer.txt` with bash (42, 41, 42 in the order the arms first ask) and
// names it; the gate wants 42.
import { join } from "node:path";
import type { Harvest } from "../../src/bon/harvest.ts";
import { BIN } from "../helpers.ts";
import { startOpenAIStandin } from "./openai.ts";
import { isTitleRequest, opencodeEnv } from "./opencode.ts";
import { specRepo } from "./spec-repo.ts";
import { spawnCollect, tempDir, type RecordedRequest, type Reply, type Standin } from "./util.ts";

type Json = Record<string, any>;

export const messageText = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((c: Json) => c.text ?? "").join("") : "";
const envelope = (value: object) => `Here is my report.\n\n\`\`\`json\n${JSON.stringify(value)}\n\`\`\``;

export const GATE = "grep -qx 42 answer.txt";
export const PRIME_SUMMARY = "I will write 42 to answer.txt.";
const VARIANTS = ["42", "41", "42"];

/** The bash command each arm runs, by the number it writes. */
export type ArmCommand = (answer: string) => string;
const writeAnswer: ArmCommand = (answer) => `echo ${answer} > answer.txt`;

/** The model: a state machine over the chat so far (stateless but for which arm got which variant). */
function model(armCommand: ArmCommand) {
  let arms = 0;
  return (req: RecordedRequest): Reply => {
    if (isTitleRequest(req)) return { text: "A title" };
    const messages = req.messages as Json[];
    const lastUser = messages.findLastIndex((m) => m.role === "user");
    const ask = messageText(messages[lastUser]?.content);
    const step = messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length;
    if (ask.includes("READING ONLY")) {
      if (step === 0) return { toolCall: { name: "bash", arguments: { command: "cat specs/task.md", description: "read the spec" } } };
      return { text: envelope({ status: "success", summary: PRIME_SUMMARY, changed_files: [] }) };
    }
    if (ask.includes("now implement the spec")) {
      if (step === 0)
        return {
          toolCall: {
            name: "bash",
            arguments: { command: armCommand(VARIANTS[arms++ % VARIANTS.length]!), description: "write the answer" },
          },
        };
      return { text: envelope({ status: "success", summary: "Wrote answer.txt.", changed_files: ["answer.txt"] }) };
    }
    return { text: "?" };
  };
}

export interface BonWorld {
  dir: string;
  repo: string;
  home: string;
  env: Record<string, string>;
  standin: Standin;
}

export function bonWorld(opencode: string, armCommand: ArmCommand = writeAnswer): BonWorld {
  const dir = tempDir("agentport-bon-opencode-");
  const standin = startOpenAIStandin(model(armCommand));
  const repo = specRepo(dir);
  const home = join(dir, "agentport");
  return { dir, repo, home, standin, env: { ...opencodeEnv(dir, standin.url), AGENTPORT_HOME: home, AGENTPORT_OPENCODE_BIN: opencode } };
}

/** A 3-arm batch's command line. */
export const bonArgv = (extra: string[]) => [
  BIN,
  "bon",
  "specs/task.md",
  "--agent",
  "opencode",
  "--model",
  "standin/standin-model",
  "--arms",
  "3",
  "--gate",
  GATE,
  "--json",
  "--progress",
  "off",
  ...extra,
];

/** A 3-arm batch of the compiled agentport, harvest.json on stdout. */
export async function runBon(w: BonWorld, extra: string[]) {
  const ran = await spawnCollect(bonArgv(extra), { cwd: w.repo, env: w.env, timeoutMs: 280_000 });
  return { ...ran, harvest: ran.stdout.trim().startsWith("{") ? (JSON.parse(ran.stdout) as Harvest) : null };
}
