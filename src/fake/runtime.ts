// What every fake agent needs: its scenario, its prompt, a stdout that respects backpressure.
import { closeSync, readdirSync, readlinkSync } from "node:fs";
import type { z } from "zod";

/** `spec` is a built-in name, a path to a JSON file, or inline JSON. */
export async function resolveScenario<S extends z.ZodType>(
  spec: string,
  builtins: Record<string, z.input<S>>,
  schema: S,
): Promise<z.output<S>> {
  let raw: unknown;
  const trimmed = spec.trim();
  if (trimmed.startsWith("{")) raw = JSON.parse(trimmed);
  else if (trimmed in builtins) raw = builtins[trimmed];
  else if (await Bun.file(trimmed).exists()) raw = await Bun.file(trimmed).json();
  else throw new Error(`unknown scenario "${spec}": name one of ${Object.keys(builtins).join(", ")}, a JSON file, or inline JSON`);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`scenario "${spec.slice(0, 60)}": ${issue?.path.join(".") || "(root)"}: ${issue?.message}`);
  }
  return parsed.data;
}

export async function readPromptFromStdin(): Promise<string> {
  if (process.stdin.isTTY) return "";
  return await Bun.stdin.text();
}

/** Write to stdout and wait until the pipe took it, so a slow reader slows us down instead of our memory growing. */
export function writeOut(data: string | Uint8Array): Promise<void> {
  // After closeStdout the rest of the stream goes nowhere, as it would for the real agent.
  if (stdoutClosed) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const flushed = process.stdout.write(data, (error) => (error ? reject(error) : undefined));
    if (flushed) resolve();
    else process.stdout.once("drain", () => resolve());
  });
}

/** Close stdout while the process lives on (an agent that hands its stream back early). */
let stdoutClosed = false;

export async function closeStdout(): Promise<void> {
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  stdoutClosed = true;
  // The runtime keeps a duplicate of fd 1: every descriptor of the same pipe goes.
  let target = "";
  try {
    target = readlinkSync("/proc/self/fd/1");
  } catch {
    closeSync(1);
    return;
  }
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === target) closeSync(Number(fd));
    } catch {
      // Gone already (the listing's own descriptor).
    }
  }
}

/** One line of `bytes` bytes, `head` + filler + `tail`, written in 1 MiB pieces so the fake stays small too. */
export async function writeHugeLine(bytes: number, head: string, tail: string): Promise<void> {
  await writeOut(head);
  const piece = "z".repeat(1024 * 1024);
  let left = Math.max(0, bytes - head.length - tail.length);
  while (left > 0) {
    const n = Math.min(left, piece.length);
    await writeOut(n === piece.length ? piece : piece.slice(0, n));
    left -= n;
  }
  await writeOut(tail);
}

/**
 * A grandchild sleeping in the fake's process group — or, with `ownGroup`, in
 * a session of its own, as gemini's and opencode's tools do — its pid written
 * where a test looks for it.
 */
export async function startGrandchild(pidFile: string, ownGroup = false): Promise<void> {
  const child = Bun.spawn(["sleep", "600"], { stdin: "ignore", stdout: "ignore", stderr: "ignore", detached: ownGroup });
  child.unref();
  const file = pidFile || process.env.AGENTPORT_FAKE_PIDFILE;
  if (file) await Bun.write(file, String(child.pid));
}

/** About `bytes` of stderr (whole lines, not more) in 1 MiB pieces of numbered lines, each written before the next: a chatty agent's log. */
export async function floodStderr(bytes: number): Promise<void> {
  const line = (n: number) => `stderr line ${String(n).padStart(9, "0")} ${"e".repeat(64)}\n`;
  const size = line(0).length;
  const per = Math.floor((1024 * 1024) / size);
  let n = 0;
  for (let left = bytes; left >= size; ) {
    let piece = "";
    for (let i = 0; i < Math.min(per, Math.floor(left / size)); i++) piece += line(n++);
    left -= piece.length;
    await new Promise<void>((resolve, reject) => process.stderr.write(piece, (error) => (error ? reject(error) : resolve())));
  }
}
