import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { onnxEncoder } from "../src/engine/builtin/onnx-encoder.js";
import { compare, maxAbsDiff, readReference } from "../scripts/encoder-reference.js";

// Vectors of the package's tfjs graph (scripts/record-encoder-reference.ts): STS-B and eval/dev texts, random strings.
const sample = readReference(fileURLToPath(new URL("../../test/fixtures/encoder-reference.json", import.meta.url)));

test("the ONNX encoder gives the tfjs graph's vectors within 1e-4, alone and in batches of mixed lengths", async () => {
  assert.ok(sample.length >= 50);
  assert.deepEqual(new Set(sample.map((r) => r.source)), new Set(["stsb", "eval", "random"]));
  const { alone, mixed } = await compare(await onnxEncoder(), sample, 7);
  assert.ok(alone <= 1e-4, `alone: ${alone}`);
  assert.ok(mixed <= 1e-4, `mixed: ${mixed}`);
});

test("a row's vector does not depend on its batch company: equal-length batches are bit-identical to the row alone", async () => {
  const encoder = await onnxEncoder();
  const row = sample.find((r) => r.ids.length >= 8) ?? sample[0];
  const alone = await encoder.embed(Int32Array.of(row.ids.length), row.ids);
  const len = row.ids.length;
  const other = Int32Array.from(row.ids, (id, i) => (id + 17 * (i + 1)) % 8002);
  const ids = new Int32Array(3 * len);
  ids.set(other, 0);
  ids.set(row.ids, len);
  ids.set(other.slice().reverse(), 2 * len);
  const out = await encoder.embed(Int32Array.of(len, len, len), ids);
  assert.deepEqual(out.slice(512, 1024), alone);
  let norm = 0;
  for (const x of alone) norm += x * x;
  assert.ok(Math.abs(norm - 1) < 1e-5);
  assert.ok(maxAbsDiff(alone, row.vector) <= 1e-4);
});

test("the int8 encoder file stays near the tfjs vectors and keeps a row's numbers independent of its batch", async () => {
  const encoder = await onnxEncoder("int8");
  const { alone, mixed } = await compare(encoder, sample, 7);
  assert.ok(alone <= 0.05 && mixed <= 0.05, `alone ${alone}, mixed ${mixed}`);
  const row = sample.find((r) => r.ids.length >= 8) ?? sample[0];
  const len = row.ids.length;
  const ids = new Int32Array(2 * len);
  ids.set(Int32Array.from(row.ids, (id) => (id * 7 + 1) % 8002), 0);
  ids.set(row.ids, len);
  const pair = await encoder.embed(Int32Array.of(len, len), ids);
  assert.deepEqual(pair.slice(512, 1024), await encoder.embed(Int32Array.of(len), row.ids));
});
