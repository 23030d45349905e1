// The prompt: --prompt TEXT, else the positional words joined with single
// spaces (as `echo` joins them), else stdin when the words are "-" or absent.
import { usageError } from "./errors.ts";
import { isTerminal } from "./fd-out.ts";

export async function readPrompt(words: readonly string[], flag?: string): Promise<string> {
  let prompt: string;
  const stdin = words.length === 0 || (words.length === 1 && words[0] === "-");
  if (flag !== undefined) {
    if (words.length > 0) throw usageError(`give the prompt once: --prompt, or as words (got both: "${words.join(" ").slice(0, 40)}")`);
    prompt = flag;
  } else if (!stdin) prompt = words.join(" ");
  else if (isTerminal(0) && words.length === 0) {
    throw usageError('no prompt: give it as words, with --prompt TEXT (for one that starts with "-"), or pipe it on stdin with "-"');
  } else prompt = await Bun.stdin.text();
  if (!prompt.trim()) throw usageError("the prompt is empty: give a prompt as words, with --prompt, or on stdin");
  return prompt;
}
