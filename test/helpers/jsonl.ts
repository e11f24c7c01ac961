/** Every string of a folder's JSONL records, for tests and benches that run texts through the tokenizer. */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** Every string in a JSONL file's records: values and object keys, nested. */
export function jsonlStrings(file: string): string[] {
  const out: string[] = [];
  const add = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(add);
    else if (v && typeof v === "object")
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        add(x);
      }
  };
  for (const line of readFileSync(file, "utf8").split("\n")) if (line.trim()) add(JSON.parse(line));
  return out;
}

/** The .jsonl files under dir (recursively), sorted. */
export function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((f) => f.isFile() && f.name.endsWith(".jsonl"))
    .map((f) => join(f.parentPath, f.name))
    .sort();
}
