// Is this byte run well-formed UTF-8 (the WHATWG decoder's rules: no
// overlongs, no surrogates, nothing past U+10FFFF)? The pure fallback of the
// framer's check on big lines; a runtime may hand the framer a native one.

export type Utf8Check = (bytes: Uint8Array) => boolean;

export const isWellFormedUtf8: Utf8Check = (bytes) => {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const c = bytes[i]!;
    if (c < 0x80) {
      i += 1;
      continue;
    }
    if (c < 0xc2) return false;
    if (c < 0xe0) {
      if (i + 1 >= n || (bytes[i + 1]! & 0xc0) !== 0x80) return false;
      i += 2;
      continue;
    }
    if (c < 0xf0) {
      if (i + 2 >= n) return false;
      const c1 = bytes[i + 1]!;
      if ((c1 & 0xc0) !== 0x80 || (bytes[i + 2]! & 0xc0) !== 0x80) return false;
      if ((c === 0xe0 && c1 < 0xa0) || (c === 0xed && c1 > 0x9f)) return false;
      i += 3;
      continue;
    }
    if (c > 0xf4 || i + 3 >= n) return false;
    const c1 = bytes[i + 1]!;
    if ((c1 & 0xc0) !== 0x80 || (bytes[i + 2]! & 0xc0) !== 0x80 || (bytes[i + 3]! & 0xc0) !== 0x80) return false;
    if ((c === 0xf0 && c1 < 0x90) || (c === 0xf4 && c1 > 0x8f)) return false;
    i += 4;
  }
  return true;
};
