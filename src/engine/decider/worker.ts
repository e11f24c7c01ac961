/**
 * Runs the decision model's two ONNX graphs in a worker thread (onnxruntime-node's session.run() is synchronous
 * on the calling thread): the encoder over every distinct text of a job, then the scorer once per question.
 * Between batches the worker yields to its event loop, so a cancel message stops a job within one batch.
 */
import { parentPort, workerData } from "node:worker_threads";
import ort from "onnxruntime-node";
import { int64 } from "../int64.js";

export interface DeciderWorkerInit {
  encoderPath: string;
  scorerPath: string;
  threads: number;
}

/** One question for the scorer: indexes into the job's texts; `stateLength` state tokens are read. */
export interface ScorerQuestion {
  type: number;
  stateLength: number;
  question: number;
  segments: number[];
}

export interface DeciderJob {
  kind: "job";
  id: number;
  /** Distinct token id sequences (specials included), in an order that depends only on the set of texts. */
  texts: Int32Array[];
  state: number;
  questions: ScorerQuestion[];
  /** A request's chunks share its state: the first computes it, the others find it here by this key. */
  stateKey: string;
  /** Whether chunks of the same request follow (the state is kept for them) or this is the last. */
  moreChunks: boolean;
}

/** Mean-pooled, L2-normalised sentence vectors of texts (the encoder alone: e5's own similarity, a baseline for evals). */
export interface EmbedJob {
  kind: "embed";
  id: number;
  texts: Int32Array[];
}

export type DeciderMessage = DeciderJob | EmbedJob | { kind: "cancel"; id: number };

export type DeciderReply =
  | { kind: "ready" }
  | { kind: "load-error"; message: string }
  | { kind: "result"; id: number; scores: Float32Array[] }
  | { kind: "cancelled"; id: number }
  | { kind: "run-error"; id: number; message: string };

export const HIDDEN = 384;
/** Tokens per encoder batch: texts of one length run together, at most this many tokens at once. */
const BATCH_TOKENS = 1024;
/** States kept for the next chunks of their requests (each is dropped with its request's last chunk). */
const MAX_STATES = 16;

const ones = (n: number): BigInt64Array => int64(new Int32Array(n).fill(1));
const yieldTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

class Cancelled extends Error {}

function meanPool(h: Float32Array): Float32Array {
  const n = h.length / HIDDEN;
  const v = new Float32Array(HIDDEN);
  for (let t = 0; t < n; t++) for (let i = 0; i < HIDDEN; i++) v[i] += h[t * HIDDEN + i];
  let norm = 0;
  for (let i = 0; i < HIDDEN; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < HIDDEN; i++) v[i] /= norm;
  return v;
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error("decider worker must run as a worker thread");
  const init = workerData as DeciderWorkerInit;
  const options: ort.InferenceSession.SessionOptions = {
    intraOpNumThreads: init.threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
    // Idle intra-op threads sleep instead of spinning: a 12-layer run keeps both cores busy for seconds, and
    // spinning threads starved the event loop (a /healthz took 260-460 ms during a 64-question request).
    extra: { session: { intra_op: { allow_spinning: "0" } } },
  };
  let encoder: ort.InferenceSession;
  let scorer: ort.InferenceSession;
  try {
    encoder = await ort.InferenceSession.create(init.encoderPath, options);
    scorer = await ort.InferenceSession.create(init.scorerPath, options);
  } catch (err) {
    port.postMessage({ kind: "load-error", message: (err as Error).message } satisfies DeciderReply);
    return;
  }
  const cancelled = new Set<number>();
  const states = new Map<string, Float32Array>();
  /** Jobs queued or running: a cancel for any other id (one already answered) is dropped, so the set stays small. */
  const active = new Set<number>();
  const queue: (DeciderJob | EmbedJob)[] = [];
  let busy = false;

  /** Hidden states [length, HIDDEN] of every text; texts of equal length share batches. */
  async function encode(job: DeciderJob | EmbedJob): Promise<Float32Array[]> {
    const out = new Array<Float32Array>(job.texts.length);
    const byLength = new Map<number, number[]>();
    const known = job.kind === "job" ? states.get(job.stateKey) : undefined;
    if (known && job.kind === "job") out[job.state] = known;
    job.texts.forEach((t, i) => {
      if (out[i]) return;
      const g = byLength.get(t.length);
      if (g) g.push(i);
      else byLength.set(t.length, [i]);
    });
    for (const [length, members] of [...byLength].sort((a, b) => a[0] - b[0])) {
      const per = Math.max(1, Math.floor(BATCH_TOKENS / length));
      for (let from = 0; from < members.length; from += per) {
        await yieldTurn();
        if (cancelled.has(job.id)) throw new Cancelled();
        const rows = members.slice(from, from + per);
        const ids = new Int32Array(rows.length * length);
        rows.forEach((m, k) => ids.set(job.texts[m], k * length));
        const dims = [rows.length, length];
        const r = await encoder.run({ input_ids: new ort.Tensor("int64", int64(ids), dims), attention_mask: new ort.Tensor("int64", ones(ids.length), dims) });
        const h = r.last_hidden_state.data as Float32Array;
        rows.forEach((m, k) => (out[m] = h.slice(k * length * HIDDEN, (k + 1) * length * HIDDEN)));
      }
    }
    return out;
  }

  async function score(job: DeciderJob, hidden: Float32Array[]): Promise<Float32Array[]> {
    const results: Float32Array[] = [];
    for (const q of job.questions) {
      await yieldTurn();
      if (cancelled.has(job.id)) throw new Cancelled();
      const st = hidden[job.state];
      const stateLen = Math.min(q.stateLength, st.length / HIDDEN);
      const qh = hidden[q.question];
      const n = q.segments.length;
      const lo = Math.max(...q.segments.map((s) => hidden[s].length / HIDDEN));
      const opts = new Float32Array(n * lo * HIDDEN);
      const omask = new Int32Array(n * lo);
      q.segments.forEach((s, k) => {
        opts.set(hidden[s], k * lo * HIDDEN);
        omask.fill(1, k * lo, k * lo + hidden[s].length / HIDDEN);
      });
      const r = await scorer.run({
        state: new ort.Tensor("float32", st.subarray(0, stateLen * HIDDEN), [1, stateLen, HIDDEN]),
        state_mask: new ort.Tensor("int64", ones(stateLen), [1, stateLen]),
        question: new ort.Tensor("float32", qh, [1, qh.length / HIDDEN, HIDDEN]),
        question_mask: new ort.Tensor("int64", ones(qh.length / HIDDEN), [1, qh.length / HIDDEN]),
        options: new ort.Tensor("float32", opts, [n, lo, HIDDEN]),
        options_mask: new ort.Tensor("int64", int64(omask), [n, lo]),
        qtype: new ort.Tensor("int64", int64([q.type]), [1]),
      });
      results.push(Float32Array.from(r.scores.data as Float32Array));
    }
    return results;
  }

  async function drain(): Promise<void> {
    if (busy) return;
    busy = true;
    while (queue.length > 0) {
      const job = queue.shift()!;
      try {
        if (cancelled.has(job.id)) throw new Cancelled();
        const hidden = await encode(job);
        if (job.kind === "job") {
          states.delete(job.stateKey);
          if (job.moreChunks) {
            states.set(job.stateKey, hidden[job.state]);
            if (states.size > MAX_STATES) states.delete(states.keys().next().value as string);
          }
        }
        const scores = job.kind === "job" ? await score(job, hidden) : hidden.map(meanPool);
        port!.postMessage({ kind: "result", id: job.id, scores } satisfies DeciderReply);
      } catch (err) {
        if (err instanceof Cancelled) port!.postMessage({ kind: "cancelled", id: job.id } satisfies DeciderReply);
        else port!.postMessage({ kind: "run-error", id: job.id, message: (err as Error).message } satisfies DeciderReply);
      }
      cancelled.delete(job.id);
      active.delete(job.id);
    }
    busy = false;
  }

  port.on("message", (msg: DeciderMessage) => {
    if (msg.kind === "cancel") {
      if (active.has(msg.id)) cancelled.add(msg.id);
    } else {
      active.add(msg.id);
      queue.push(msg);
      void drain();
    }
  });
  port.postMessage({ kind: "ready" } satisfies DeciderReply);
}

void main();
