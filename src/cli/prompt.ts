// The prompt: the argument, or stdin when the argument is "-" or absent.
import { usageError } from "./errors.ts";

export async function readPrompt(arg: string | undefined): Promise<string> {
  let prompt: string;
  if (arg !== undefined && arg !== "-") prompt = arg;
  else if (process.stdin.isTTY && arg === undefined) {
    throw usageError('no prompt: give it as an argument, or pipe it on stdin with "-"');
  } else prompt = await Bun.stdin.text();
  if (!prompt.trim()) throw usageError("the prompt is empty: give a prompt as an argument or on stdin");
  return prompt;
}
