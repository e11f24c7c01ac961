/**
 * Compares the ONNX encoder files (float32, and int8 when present) with reference vectors of the
 * package's tfjs graph, each row alone and in padded batches of mixed lengths.
 *
 *     npm run build && node dist/scripts/check-encoder-parity.js [FILE]
 *
 * FILE defaults to bench/results/tmp-encoder-reference.json (scripts/record-encoder-reference.ts).
 * About 15 s on 2 cores for 2,000 rows.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { onnxEncoder } from "../src/engine/builtin/onnx-encoder.js";
import { ENCODER_FILES, encoderPath, type EncoderVariant } from "../src/engine/builtin/encoder-files.js";
import { compare, readReference } from "./encoder-reference.js";

const file = process.argv[2] ?? join("bench", "results", "tmp-encoder-reference.json");
const rows = readReference(file);
for (const variant of Object.keys(ENCODER_FILES) as EncoderVariant[]) {
  if (!existsSync(encoderPath(variant))) continue;
  const started = performance.now();
  const { alone, mixed } = await compare(await onnxEncoder(variant), rows);
  const bySource: Record<string, number> = {};
  for (const r of rows) bySource[r.source] = (bySource[r.source] ?? 0) + 1;
  console.log(JSON.stringify({ variant, rows: rows.length, sources: bySource, maxAbsDiffAlone: alone, maxAbsDiffMixedBatches: mixed, ms: Math.round(performance.now() - started) }));
}
