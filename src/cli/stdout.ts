// Results on stdout, and whether to colour: what even `--version` needs,
// kept apart from consola so the shortest paths load no logger. Every result
// passes the redactor by value (src/core/redact.ts).
import { secrets } from "../core/redact.ts";

export const noColor = (): boolean => Boolean(process.env.NO_COLOR) || process.env.TERM === "dumb";

/**
 * A result on stdout, waiting until it is written so an exit right after
 * loses nothing. A reader that went away (`| head`) ends the wait too: the
 * write's callback fires on flush and on error alike.
 */
export async function writeResult(text: string): Promise<void> {
  const safe = secrets.values(text);
  const data = safe.endsWith("\n") ? safe : `${safe}\n`;
  await new Promise<void>((resolve) => {
    process.stdout.write(data, () => resolve());
  });
}
