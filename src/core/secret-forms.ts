// What a secret value becomes when a program prints it: the literal forms the
// redactor looks for besides the value itself, precomputed once so that
// finding any of them stays one scan (literal-scan.ts). Pure.
//
// base64 (and base64url) in each of the three alignments the value can take
// in a longer encoded text (as in `user:password` of a Basic header): only the
// characters whose six bits all come from the value, since the first and last
// may carry a neighbour's bits. Percent-encoding (as encodeURIComponent writes
// it, as a form writes it, and every byte escaped in either case), hex (either
// case), JSON escaping (as JSON.stringify writes it, with `\/`, and every
// character `\u`-escaped), and each of these as it stands inside a JSON string.

const utf8 = new TextEncoder();

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** The characters of the value's base64 that depend on the value alone, with `offset` bytes (0, 1 or 2) of something else before it. */
function base64Core(bytes: Uint8Array, offset: number): string {
  const padded = new Uint8Array(offset + bytes.length + 2);
  padded.set(bytes, offset);
  const first = Math.ceil((8 * offset) / 6);
  const end = Math.floor((8 * (offset + bytes.length)) / 6);
  return base64(padded).slice(first, end);
}

const hexByte = (b: number) => b.toString(16).padStart(2, "0");
const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** Inside a JSON string (what stream.jsonl and verdict.json hold). */
export const jsonInner = (s: string): string => JSON.stringify(s).slice(1, -1);

/** Every form of `value` worth looking for (the value itself first), none shorter than `min` characters. */
export function secretForms(value: string, min: number): string[] {
  const bytes = utf8.encode(value);
  const json = jsonInner(value);
  const percentAll = [...bytes].map((b) => `%${hexByte(b)}`).join("");
  const component = encodeURIComponent(value);
  const unicode = value.split("").map(unicodeEscape).join("");
  const forms = [
    value,
    json,
    json.replaceAll("/", "\\/"),
    unicode,
    unicode.replace(/\\u([0-9a-f]{4})/g, (_m, h: string) => `\\u${h.toUpperCase()}`),
  ];
  for (const offset of [0, 1, 2]) {
    const core = base64Core(bytes, offset);
    forms.push(core, core.replaceAll("+", "-").replaceAll("/", "_"));
  }
  forms.push(component, component.replaceAll("%20", "+"), percentAll, percentAll.toUpperCase());
  const hex = [...bytes].map(hexByte).join("");
  forms.push(hex, hex.toUpperCase());
  const all = new Set<string>();
  for (const form of forms) {
    if (form.length < min) continue;
    all.add(form);
    all.add(jsonInner(form));
  }
  return [...all];
}
