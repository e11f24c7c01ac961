/**
 * A second encoder for the decider worker (worker.ts): its own onnxruntime session of onnx/encoder.onnx on one
 * thread, in a worker thread of its own, so that a job's encoder runs are shared between two cores. The encoder's
 * integer graph gains little from a second intra-op thread (its many small elementwise steps barely split), while
 * two one-thread sessions side by side each run at full speed: on 2 cores a 78 × 13-token run took 128 ms with one
 * two-thread session, and two one-thread sessions ran one each in 122 ms. Both sessions run the same graph on one
 * thread, so a run's states are the same bit for bit whichever computes it.
 */
import { parentPort, workerData } from "node:worker_threads";
import ort from "onnxruntime-node";
import { sessionOptions } from "./session-options.js";

/** One encoder run: token ids and attention mask [rows, length]. */
export interface EncoderRun {
  id: number;
  ids: BigInt64Array;
  mask: BigInt64Array;
  dims: [number, number];
}

export type EncoderHelperReply =
  | { kind: "ready" }
  | { kind: "load-error"; message: string }
  | { kind: "hidden"; id: number; hidden: Float32Array }
  | { kind: "run-error"; id: number; message: string };

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error("the encoder helper must run as a worker thread");
  let encoder: ort.InferenceSession;
  try {
    encoder = await ort.InferenceSession.create((workerData as { encoderPath: string }).encoderPath, sessionOptions(1));
  } catch (err) {
    port.postMessage({ kind: "load-error", message: (err as Error).message } satisfies EncoderHelperReply);
    return;
  }
  port.on("message", async (run: EncoderRun) => {
    try {
      const r = await encoder.run({ input_ids: new ort.Tensor("int64", run.ids, run.dims), attention_mask: new ort.Tensor("int64", run.mask, run.dims) });
      const hidden = Float32Array.from(r.hidden.data as Float32Array);
      port.postMessage({ kind: "hidden", id: run.id, hidden } satisfies EncoderHelperReply, [hidden.buffer]);
    } catch (err) {
      port.postMessage({ kind: "run-error", id: run.id, message: (err as Error).message } satisfies EncoderHelperReply);
    }
  });
  port.postMessage({ kind: "ready" } satisfies EncoderHelperReply);
}

void main();
