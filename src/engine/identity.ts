import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Hex digits of a model's identity: enough to tell versions apart in a header, short enough to read. */
export const HASH_LENGTH = 12;

/**
 * The identity of a model as served: sha256 over the name and bytes of each of its files (weights, tokenizer,
 * configuration and calibration), first HASH_LENGTH hex digits. Any changed byte of any of them changes it.
 * Files that do not exist are skipped (their absence is part of what was hashed: the name list is fixed).
 */
export function modelHash(dir: string, files: string[]): string {
  const h = createHash("sha256");
  for (const f of files) {
    const path = join(dir, f);
    if (!existsSync(path)) continue;
    h.update(`${f}\0`);
    h.update(readFileSync(path));
    h.update("\0");
  }
  return h.digest("hex").slice(0, HASH_LENGTH);
}
