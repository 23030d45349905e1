// The permission policy's globs: `**` any path, `*` any text without `/`, `?`
// one character, the rest literal; `slashes` false: `*` and `?` cross `/` too
// (titles). Matched by stepping a set of states along the text, never by
// backtracking: time is bounded by the glob's length times the text's, whatever
// either holds (a title glob of many `*` cannot stall an answer). Pure.

type Token =
  | { t: "char"; c: string }
  | { t: "one"; any: boolean }
  | { t: "star"; any: boolean }
  /** `**​/`: also no folder at all, i.e. skip to `to`. */
  | { t: "skip"; to: number };

export interface Glob {
  test(text: string): boolean;
}

export function globPattern(glob: string, slashes = true): Glob {
  const tokens: Token[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*" && glob[i + 1] === "*") {
      if (glob[i + 2] === "/") {
        tokens.push({ t: "skip", to: tokens.length + 3 }, { t: "star", any: true }, { t: "char", c: "/" });
        i += 2;
      } else {
        tokens.push({ t: "star", any: true });
        i += 1;
      }
    } else if (c === "*") tokens.push({ t: "star", any: !slashes });
    else if (c === "?") tokens.push({ t: "one", any: !slashes });
    else tokens.push({ t: "char", c });
  }
  const closures = tokens.map((_, i) => closure(tokens, i));
  closures.push([tokens.length]);
  return { test: (text) => run(tokens, closures, text) };
}

/** State `at` and every state reachable from it without reading a character (a `*` may match nothing; `**​/` may be skipped). */
function closure(tokens: Token[], at: number, into: number[] = []): number[] {
  for (let i = at; !into.includes(i); i++) {
    into.push(i);
    const token = tokens[i];
    if (token === undefined || token.t === "char" || token.t === "one") break;
    if (token.t === "skip") closure(tokens, token.to, into);
  }
  return into;
}

function run(tokens: Token[], closures: number[][], text: string): boolean {
  const end = tokens.length;
  // seen[i] === step: state i is already alive after this step.
  const seen = new Int32Array(end + 1).fill(-1);
  let alive: number[] = [];
  let step = 0;
  for (const i of closures[0] as number[]) {
    seen[i] = 0;
    alive.push(i);
  }
  for (const c of text) {
    step += 1;
    const next: number[] = [];
    for (const i of alive) {
      const token = tokens[i];
      if (token === undefined || token.t === "skip") continue;
      if (!(token.t === "char" ? token.c === c : token.any || c !== "/")) continue;
      for (const j of closures[token.t === "star" ? i : i + 1] as number[]) {
        if (seen[j] === step) continue;
        seen[j] = step;
        next.push(j);
      }
    }
    if (next.length === 0) return false;
    alive = next;
  }
  return seen[end] === step;
}
