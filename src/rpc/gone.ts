// How a pi that is gone is told to its callers: one PiRpcError each for the
// client, every pending command and the running turn, naming how pi ended and,
// unless the client closed it, the last lines of its stderr.
import { clean } from "../core/text.ts";
import type { Verdict } from "../core/verdict.ts";
import type { PiGone } from "./pi-process.ts";
import { PiRpcError } from "./protocol.ts";

const lastLines = (text: string): string =>
  clean(
    text
      .split("\n")
      .filter((l) => l.trim())
      .slice(-3)
      .join(" | "),
    240,
  );

/** The errors of a pi gone (`closing`: the client closed it): each says what it was gone during ("" for the client itself). */
export function goneErrors({ exitCode, signal, stderrTail }: PiGone, closing: boolean): (what: string, verdict?: Verdict) => PiRpcError {
  const how = signal !== null ? `was killed by ${signal}` : exitCode !== null ? `exited with code ${exitCode}` : "closed its stdout";
  const tail = lastLines(stderrTail);
  const base = closing ? "pi (rpc): closed" : `pi (rpc) ${how}`;
  return (what, verdict) =>
    new PiRpcError(`${base} ${what}${!closing && tail ? `: ${tail}` : ""}`, closing ? "closed" : "exited", {
      exitCode,
      signal,
      stderrTail,
      verdict,
    });
}
