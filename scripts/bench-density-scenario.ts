/**
 * bench-density-scenario.ts — what bench-density.ts and bench-one-process.ts
 * run: the fake agent's ~S seconds of text and tool calls, and the `run` flags.
 */
export type Agent = "claude" | "pi";
export const ANSWER = "density run done";
export const PROMPT = "Do the density task.";

/** ~seconds of streaming: every half second a line of text and a tool call, then the answer. */
export function scenario(agent: Agent, seconds: number): unknown {
  const rounds = Math.max(1, Math.round(seconds * 2));
  const steps: unknown[] = [];
  for (let i = 0; i < rounds; i++) {
    steps.push({ text: `Step ${i}: reading the next file.` });
    steps.push(
      agent === "claude"
        ? { tool: { name: "Read", input: { file_path: `src/file${i}.ts` }, result: `contents of file ${i}` } }
        : { tool: { name: "read", args: { path: `src/file${i}.ts` }, result: `contents of file ${i}` } },
    );
    steps.push({ sleep: 500 });
  }
  if (agent === "claude") steps.push({ text: ANSWER }, { result: { text: ANSWER } });
  else steps.push({ text: ANSWER });
  return { steps };
}

/** `agentport run`'s flags for one density run of `fake` (the compiled binary through a symlink). */
export function runFlags(agent: Agent, fake: string): string[] {
  return agent === "pi"
    ? ["--agent", "pi", "--pi-bin", fake, "--model", "standin/standin-model", "--direct", "--progress", "json", "--json", "-"]
    : ["--agent", "claude", "--claude-bin", fake, "--progress", "json", "--json", "-"];
}
