/**
 * The built-in English encoder as the project's own ONNX graph (models/builtin/encoder/, built by
 * scripts/build-encoder-onnx.py from the package's weights), run by onnxruntime-node. A batch's rows
 * are padded to its longest row; the graph masks padding out of attention and pooling, so a row's
 * numbers do not depend on its company (the pool batches equal lengths anyway).
 */
import ort from "onnxruntime-node";
import { encoderPath, type EncoderVariant } from "./encoder-files.js";

/** Embeds a batch: `lengths[r]` ids of row r, concatenated in `ids`; 512 floats per row out. */
export interface BatchEncoder {
  backend: string;
  embed(lengths: Int32Array, ids: Int32Array): Promise<Float32Array<ArrayBuffer>>;
}

export function onnxEncoder(variant: EncoderVariant = "onnx", threads = 1): Promise<BatchEncoder> {
  return onnxBatches(encoderPath(variant), "embeddings", `onnxruntime-${variant}`, threads);
}

/** Any graph with the encoder's inputs: `output` is read per row (embeddings, or the cross-encoder's scores). */
export async function onnxBatches(file: string, output: string, backend: string, threads = 1): Promise<BatchEncoder> {
  const session = await ort.InferenceSession.create(file, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
  const embed = async (lengths: Int32Array, ids: Int32Array): Promise<Float32Array<ArrayBuffer>> => {
    const rows = lengths.length;
    const width = lengths.reduce((a, b) => Math.max(a, b), 0);
    const dense = new Int32Array(rows * width);
    const mask = new Int32Array(rows * width);
    let at = 0;
    for (let r = 0; r < rows; r++) {
      const len = lengths[r];
      dense.set(ids.subarray(at, at + len), r * width);
      mask.fill(1, r * width, r * width + len);
      at += len;
    }
    const dims = [rows, width];
    const out = await session.run({ input_ids: new ort.Tensor("int32", dense, dims), attention_mask: new ort.Tensor("int32", mask, dims) });
    // Copy out of ONNX Runtime's buffer so it can be transferred.
    return Float32Array.from(out[output].data as Float32Array);
  };
  return { backend, embed };
}
