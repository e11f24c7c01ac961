/**
 * Model worker: loads the English encoder (Universal Sentence Encoder lite as an ONNX graph on
 * onnxruntime), or the multilingual student table, and embeds batches of token-id sequences. Runs
 * in a worker thread so inference never blocks the main event loop. Protocol types live in
 * pool.ts; this file only runs inside a Worker.
 */
import { parentPort, workerData } from "node:worker_threads";
import { readFileSync, readlinkSync } from "node:fs";
import { basename } from "node:path";
import { setPriority } from "node:os";
import type { EmbedRequest, WorkerReply, WorkerSetup } from "./pool.js";
import { Student } from "./student.js";
import { vocabPath, type Vocabulary } from "./tokenizer.js";
import { onnxBatches, onnxEncoder, type BatchEncoder } from "./onnx-encoder.js";
import { tfjsEncoder } from "./tfjs-encoder.js";

const port = parentPort;
if (!port) throw new Error("builtin model worker must run in a worker thread");

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

/**
 * The cross-encoder's graph when the pool runs it; else the teacher's runtime: the project's ONNX graph by default; SVC_BUILTIN_ENCODER=int8 picks its
 * int8 file, and =tfjs the package's tfjs graph it was built from (a dev dependency, for measuring).
 */
function graph(): Promise<BatchEncoder> {
  if (setup.encoder.kind === "cross") return onnxBatches(setup.encoder.file, "scores", `onnxruntime-${basename(setup.encoder.file, ".onnx")}`);
  const choice = process.env.SVC_BUILTIN_ENCODER ?? "onnx";
  if (choice === "tfjs") return tfjsEncoder();
  if (choice === "onnx" || choice === "int8") return onnxEncoder(choice);
  return Promise.reject(new Error(`SVC_BUILTIN_ENCODER must be onnx, int8 or tfjs, not ${JSON.stringify(choice)}`));
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
} else graph().then(
  (encoder) => {
    port.on("message", (req: EmbedRequest) => {
      encoder.embed(req.lengths, req.ids).then(
        (vectors) => port.postMessage({ kind: "result", id: req.id, vectors } satisfies WorkerReply, [vectors.buffer]),
        (err: unknown) => port.postMessage({ kind: "error", id: req.id, message: errorText(err) } satisfies WorkerReply),
      );
    });
    port.postMessage({ kind: "ready", backend: encoder.backend } satisfies WorkerReply);
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
