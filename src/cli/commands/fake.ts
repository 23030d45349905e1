// The hidden fake agents, reached as `agentport fake-claude …` or through a
// symlink named `fake-claude`. Their argv is the real agent's, so citty never
// sees it; the scenario comes from $AGENTPORT_FAKE_SCENARIO or --scenario.
import { fakeClaude } from "../../fake/claude.ts";
import { fakePi } from "../../fake/pi/index.ts";
import { fakeCodex } from "../../fake/codex/index.ts";
import { fakeGemini } from "../../fake/gemini/index.ts";
import { fakeOpencode } from "../../fake/opencode/index.ts";
import { fakeAcp } from "../../fake/acp/index.ts";
import type { FakeName } from "../../core/agents.ts";
import { guardStreams } from "../stdout.ts";

export async function runFake(name: FakeName, argv: string[]): Promise<number> {
  // A fake writes through process.stdout: the agentport reading it may go away first.
  guardStreams();
  const flag = argv.indexOf("--scenario");
  const scenario = flag >= 0 ? argv[flag + 1] : process.env.AGENTPORT_FAKE_SCENARIO;
  try {
    switch (name) {
      case "fake-claude":
        return await fakeClaude(argv, scenario);
      case "fake-pi":
        return await fakePi(argv, scenario);
      case "fake-codex":
        return await fakeCodex(argv, scenario);
      case "fake-gemini":
        return await fakeGemini(argv, scenario);
      case "fake-opencode":
        return await fakeOpencode(argv, scenario);
      case "fake-acp":
        return await fakeAcp(argv, scenario);
    }
  } catch (error) {
    process.stderr.write(`${name}: ${(error as Error).message}\n`);
    return 2;
  }
}
