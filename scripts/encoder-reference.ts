/** Files of reference vectors written by scripts/record-encoder-reference.ts, and comparisons with them. */
import { readFileSync } from "node:fs";
import type { BatchEncoder } from "../src/engine/builtin/onnx-encoder.js";

export interface ReferenceRow {
  source: string;
  text: string;
  ids: number[];
  /** 512 float32, little-endian, base64. */
  vector: string;
}

export interface Reference {
  encoder: string;
  rows: ReferenceRow[];
}

export function readReference(path: string): { ids: Int32Array; vector: Float32Array; source: string }[] {
  const ref = JSON.parse(readFileSync(path, "utf8")) as Reference;
  return ref.rows.map((r) => {
    const bytes = Buffer.from(r.vector, "base64");
    return { ids: Int32Array.from(r.ids), vector: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4), source: r.source };
  });
}

export function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

/** Largest difference from the reference, each row embedded alone and in batches of `batch` rows of mixed lengths. */
export async function compare(
  encoder: BatchEncoder,
  rows: { ids: Int32Array; vector: Float32Array }[],
  batch = 16,
): Promise<{ alone: number; mixed: number }> {
  let alone = 0;
  for (const r of rows) alone = Math.max(alone, maxAbsDiff(await encoder.embed(Int32Array.of(r.ids.length), r.ids), r.vector));
  let mixed = 0;
  for (let at = 0; at < rows.length; at += batch) {
    const chunk = rows.slice(at, at + batch);
    const lengths = Int32Array.from(chunk, (r) => r.ids.length);
    const ids = Int32Array.from(chunk.flatMap((r) => Array.from(r.ids)));
    const out = await encoder.embed(lengths, ids);
    chunk.forEach((r, i) => (mixed = Math.max(mixed, maxAbsDiff(out.subarray(i * 512, (i + 1) * 512), r.vector))));
  }
  return { alone, mixed };
}
