// Help text for the terminal's width: citty pads its rows to the widest one
// (234 characters) and leaves the wrapping to the terminal, mid-word. Here each
// row is trimmed, and a long one is wrapped at word boundaries, its
// continuation lines under its description column.

/** Where the description of a `  --flag=<X>    description` row starts (a gap of 3+ spaces), else 0. */
function descriptionColumn(line: string): number {
  const match = /^(\s*\S.*?\s{3,})\S/.exec(line);
  return match === null ? 0 : (match[1] as string).length;
}

/** Words of `text` in lines of at most `width` characters (a longer word alone on its line). */
function words(text: string, width: number): string[] {
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

export function wrapHelp(text: string, width: number): string {
  const out: string[] = [];
  const push = (indent: number, parts: string[]) => out.push(...parts.map((part) => `${" ".repeat(indent)}${part}`));
  for (const raw of text.split("\n")) {
    const line = raw.trimEnd();
    const column = descriptionColumn(line);
    if (line.length <= width) out.push(line);
    else if (column === 0) {
      const indent = line.length - line.trimStart().length;
      push(indent, words(line, Math.max(20, width - indent)));
    } else if (column > width / 2) {
      // A name column past half the width: the description goes below it.
      out.push(line.slice(0, column).trimEnd());
      push(8, words(line.slice(column), width - 8));
    } else {
      const [first, ...rest] = words(line.slice(column), width - column);
      out.push(`${line.slice(0, column)}${first ?? ""}`);
      push(column, rest);
    }
  }
  return out.join("\n");
}
