/**
 * Owns the ONNX Runtime session. onnxruntime-node's session.run() executes synchronously on the
 * calling thread (the JS wrapper only defers it with setImmediate), so it runs here and the main
 * thread's event loop stays free while a batch is computed.
 */
import { parentPort, workerData } from "node:worker_threads";
import ort from "onnxruntime-node";
import { int64 } from "../int64.js";

export interface WorkerInit {
  modelPath: string;
  threads: number;
}

/** A padded batch: rows of `length` tokens. token_type_ids are sent only when the model takes them. */
export interface BatchRequest {
  id: number;
  rows: number;
  length: number;
  ids: Int32Array;
  mask: Int32Array;
  types: Int32Array | null;
}

export type WorkerReply =
  | { kind: "ready"; inputNames: string[]; outputName: string; outputWidth: number | null }
  | { kind: "load-error"; message: string }
  | { kind: "result"; id: number; logits: Float32Array; width: number }
  | { kind: "run-error"; id: number; message: string };

const KNOWN_INPUTS = new Set(["input_ids", "attention_mask", "token_type_ids"]);

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error("worker.ts must run as a worker thread");
  const init = workerData as WorkerInit;
  let session: ort.InferenceSession;
  let outputName: string;
  let types: Map<string, string>;
  try {
    session = await ort.InferenceSession.create(init.modelPath, {
      intraOpNumThreads: init.threads,
      interOpNumThreads: 1,
      executionMode: "sequential",
      graphOptimizationLevel: "all",
    });
    const unknown = session.inputNames.filter((n) => !KNOWN_INPUTS.has(n));
    if (!session.inputNames.includes("input_ids") || unknown.length > 0) {
      throw new Error(
        `the ONNX model takes inputs ${session.inputNames.join(", ")}; svc feeds input_ids, attention_mask and token_type_ids only`,
      );
    }
    types = new Map(session.inputMetadata.map((m) => [m.name, m.isTensor ? m.type : "?"]));
    outputName = session.outputNames.includes("logits") ? "logits" : session.outputNames[0];
    const meta = session.outputMetadata[session.outputNames.indexOf(outputName)];
    const last = meta?.isTensor ? meta.shape[meta.shape.length - 1] : undefined;
    const reply: WorkerReply = {
      kind: "ready",
      inputNames: session.inputNames.slice(),
      outputName,
      outputWidth: typeof last === "number" ? last : null,
    };
    port.postMessage(reply);
  } catch (err) {
    const reply: WorkerReply = { kind: "load-error", message: (err as Error).message };
    port.postMessage(reply);
    return;
  }

  const tensor = (name: string, xs: Int32Array, dims: number[]): ort.Tensor =>
    types.get(name) === "int32" ? new ort.Tensor("int32", xs, dims) : new ort.Tensor("int64", int64(xs), dims);

  port.on("message", (req: BatchRequest) => {
    void (async () => {
      try {
        const dims = [req.rows, req.length];
        const feeds: Record<string, ort.Tensor> = { input_ids: tensor("input_ids", req.ids, dims) };
        if (session.inputNames.includes("attention_mask")) feeds.attention_mask = tensor("attention_mask", req.mask, dims);
        if (session.inputNames.includes("token_type_ids")) {
          feeds.token_type_ids = tensor("token_type_ids", req.types ?? new Int32Array(req.ids.length), dims);
        }
        const out = await session.run(feeds, [outputName]);
        const t = out[outputName];
        const width = t.dims[t.dims.length - 1];
        // Copy out of ONNX Runtime's buffer so it can be transferred.
        const logits = Float32Array.from(t.data as Float32Array);
        const reply: WorkerReply = { kind: "result", id: req.id, logits, width };
        port.postMessage(reply, [logits.buffer]);
      } catch (err) {
        const reply: WorkerReply = { kind: "run-error", id: req.id, message: (err as Error).message };
        port.postMessage(reply);
      }
    })();
  });
}

void main();
