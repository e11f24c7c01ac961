/** FNV-1a, 32 bit, over the UTF-8 bytes of a string. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export type Split = "fit" | "test";

/** Items are split by group so that near-duplicates of one group never straddle fit and test. */
export function splitOf(group: string): Split {
  return fnv1a32(group) % 2 === 0 ? "fit" : "test";
}
