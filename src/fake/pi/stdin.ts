// pi's stdin, read to EOF once: the session question takes its first line, the prompt the rest.
let stdinCache: string | undefined;

export async function stdinText(): Promise<string> {
  if (process.stdin.isTTY) return "";
  stdinCache ??= await Bun.stdin.text();
  return stdinCache;
}

/** What is left of stdin after a line was answered. */
export function keepStdin(rest: string): void {
  stdinCache = rest;
}
