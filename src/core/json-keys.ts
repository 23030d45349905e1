// A key repeated in one JSON object: JSON.parse keeps the last silently, so a
// file saying `"decision": "reject", …, "decision": "allow"` would allow. Pure.

/** The first key repeated within one object of `text` (JSON that parsed), else null. */
export function repeatedKey(text: string): string | null {
  // Per open bracket: an object's keys so far, or null for an array.
  const open: (Set<string> | null)[] = [];
  let keyNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const keys = open.at(-1);
      if (keyNext && keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
      }
      keyNext = false;
      i = end;
    } else if (c === "{") {
      open.push(new Set());
      keyNext = true;
    } else if (c === "[") open.push(null);
    else if (c === "}" || c === "]") open.pop();
    else if (c === ",") keyNext = open.at(-1) instanceof Set;
  }
  return null;
}
