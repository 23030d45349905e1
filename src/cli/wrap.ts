// Words in lines of a width, for help text: wrapped at word boundaries, never
// mid-word (a word longer than the width stands alone on its line).

/** Words of `text` in lines of at most `width` characters. */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (current !== "" && current.length + 1 + word.length > width) {
      lines.push(current);
      current = word;
    } else current = current === "" ? word : `${current} ${word}`;
  }
  if (current !== "") lines.push(current);
  return lines;
}

/** `text` wrapped to `width`, each line indented by `indent` spaces. */
export function indented(text: string, indent: number, width: number): string[] {
  return wrapWords(text, Math.max(20, width - indent)).map((line) => `${" ".repeat(indent)}${line}`);
}

/**
 * A shell command in lines of `width`: cut at spaces outside quotes, each cut
 * line ending with ` \` and the next indented, so it still runs when pasted.
 */
export function wrapCommand(command: string, indent: number, width: number): string[] {
  const words: string[] = [];
  let quote: string | null = null;
  let current = "";
  for (const c of command) {
    if (quote === null && c === " ") {
      if (current !== "") words.push(current);
      current = "";
      continue;
    }
    if (quote === null && (c === '"' || c === "'")) quote = c;
    else if (c === quote) quote = null;
    current += c;
  }
  if (current !== "") words.push(current);
  const lines: string[] = [];
  let line = "";
  const room = (first: boolean) => width - (first ? indent : indent + 4) - 2;
  for (const word of words) {
    if (line !== "" && line.length + 1 + word.length > room(lines.length === 0)) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines.map((l, i) => `${" ".repeat(i === 0 ? indent : indent + 4)}${l}${i < lines.length - 1 ? " \\" : ""}`);
}
