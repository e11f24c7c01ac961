/**
 * Runs the decision model's three ONNX graphs in a worker thread (onnxruntime-node's session.run() is synchronous
 * on the calling thread): the encoder over every distinct text of a job (in the runs encoder-runs.ts plans), the
 * state graph once (the state's keys and values in the scorer's layers), then the scorer once per question.
 * Between batches the worker yields to its event loop, so a cancel message stops a job within one batch.
 */
import { parentPort, Worker, workerData } from "node:worker_threads";
import ort from "onnxruntime-node";
import { int64 } from "../int64.js";
import { encoderRuns, shareRuns } from "./encoder-runs.js";
import type { EncoderHelperReply } from "./encoder-helper.js";
import { sessionOptions } from "./session-options.js";

export interface DeciderWorkerInit {
  encoderPath: string;
  statePath: string;
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
  /** `encoded`: texts the encoder ran on for this job (the others were kept from earlier jobs). */
  | { kind: "result"; id: number; scores: Float32Array[]; encoded: number }
  | { kind: "cancelled"; id: number }
  | { kind: "run-error"; id: number; message: string };

export const HIDDEN = 384;
/** The encoder hands over each token's states after layers 10, 11 and 12 side by side (the scorer's inputs). */
const WIDTH = 3 * HIDDEN;
/** The state graph's output per token: keys and values of the scorer's two layers side by side. */
const KV_WIDTH = 4 * HIDDEN;
/** States kept for the next chunks of their requests (each is dropped with its request's last chunk). */
const MAX_STATES = 16;
/**
 * Encoder outputs of question and option texts kept for later requests, at most this many floats (64 MiB): the
 * same questions and options come back request after request (a router asks the same question with the same
 * labels of every ticket), and a text's outputs depend on its tokens alone (see encoder-runs.ts), so a kept one is
 * bit for bit what encoding it again would give.
 */
const CACHED_FLOATS = 16 * 2 ** 20;

/** Least recently used first out, bounded by the floats it holds. */
class HiddenCache {
  private readonly map = new Map<string, Float32Array>();
  private floats = 0;

  constructor(private readonly max: number) {}

  get(key: string): Float32Array | undefined {
    const v = this.map.get(key);
    if (v) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: string, v: Float32Array): void {
    if (v.length > this.max || this.map.has(key)) return;
    this.map.set(key, v);
    this.floats += v.length;
    for (const [k, old] of this.map) {
      if (this.floats <= this.max) break;
      this.map.delete(k);
      this.floats -= old.length;
    }
  }
}

const ones = (n: number): BigInt64Array => int64(new Int32Array(n).fill(1));
/** XLM-R's padding piece (id 1 in the trimmed vocabulary too); padded slots are masked out of attention. */
const PAD_ID = 1;
const yieldTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

class Cancelled extends Error {}

/** e5's sentence vector: the final layer's token states, mean-pooled and L2-normalised. */
function meanPool(h: Float32Array): Float32Array {
  const n = h.length / WIDTH;
  const v = new Float32Array(HIDDEN);
  for (let t = 0; t < n; t++) for (let i = 0; i < HIDDEN; i++) v[i] += h[t * WIDTH + 2 * HIDDEN + i];
  let norm = 0;
  for (let i = 0; i < HIDDEN; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < HIDDEN; i++) v[i] /= norm;
  return v;
}

/** The decider worker's side of encoder-helper.ts: one run at a time in, its token states out. */
class EncoderHelper {
  private nextId = 1;
  private readonly waiting = new Map<number, { ok: (h: Float32Array) => void; fail: (e: Error) => void }>();

  private constructor(private readonly worker: Worker) {
    worker.on("message", (msg: EncoderHelperReply) => {
      if (msg.kind !== "hidden" && msg.kind !== "run-error") return;
      const w = this.waiting.get(msg.id);
      this.waiting.delete(msg.id);
      if (msg.kind === "hidden") w?.ok(msg.hidden);
      else w?.fail(new Error(msg.message));
    });
    const failAll = (err: Error): void => {
      for (const w of this.waiting.values()) w.fail(err);
      this.waiting.clear();
    };
    worker.on("error", failAll);
    worker.on("exit", (code) => failAll(new Error(`the encoder helper exited with code ${code}`)));
  }

  static async start(encoderPath: string): Promise<EncoderHelper> {
    const worker = new Worker(new URL("./encoder-helper.js", import.meta.url), { workerData: { encoderPath } });
    const first = await new Promise<EncoderHelperReply>((ok, fail) => {
      worker.once("message", ok);
      worker.once("error", fail);
    });
    if (first.kind !== "ready") {
      await worker.terminate();
      throw new Error(first.kind === "load-error" ? first.message : "the encoder helper did not start");
    }
    return new EncoderHelper(worker);
  }

  run(ids: BigInt64Array, mask: BigInt64Array, dims: [number, number]): Promise<Float32Array> {
    const id = this.nextId++;
    return new Promise((ok, fail) => {
      this.waiting.set(id, { ok, fail });
      this.worker.postMessage({ id, ids, mask, dims }, [ids.buffer as ArrayBuffer, mask.buffer as ArrayBuffer]);
    });
  }
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error("decider worker must run as a worker thread");
  const init = workerData as DeciderWorkerInit;
  let encoder: ort.InferenceSession;
  let stateGraph: ort.InferenceSession;
  let scorer: ort.InferenceSession;
  let helper: EncoderHelper | null = null;
  try {
    // The encoder's matrix products are exact integer arithmetic (scripts/base/build_base.py: per-token 8-bit inputs,
    // 7-bit weights), so every CPU computes the same integers; the rest is float32. It runs on one thread here and,
    // with two threads to use, on one more in a helper (encoder-helper.ts) that takes part of every job's runs.
    encoder = await ort.InferenceSession.create(init.encoderPath, sessionOptions(1));
    stateGraph = await ort.InferenceSession.create(init.statePath, sessionOptions(init.threads));
    scorer = await ort.InferenceSession.create(init.scorerPath, sessionOptions(init.threads));
    if (init.threads >= 2) helper = await EncoderHelper.start(init.encoderPath);
  } catch (err) {
    port.postMessage({ kind: "load-error", message: (err as Error).message } satisfies DeciderReply);
    return;
  }
  const cancelled = new Set<number>();
  const states = new Map<string, Float32Array>();
  const known = new HiddenCache(CACHED_FLOATS);
  /** Jobs queued or running: a cancel for any other id (one already answered) is dropped, so the set stays small. */
  const active = new Set<number>();
  const queue: (DeciderJob | EmbedJob)[] = [];
  let busy = false;

  /** Token states [length, WIDTH] of every text (in the runs encoder-runs.ts plans); questions and options seen before are not encoded again. */
  async function encode(job: DeciderJob | EmbedJob): Promise<{ hidden: Float32Array[]; encoded: number }> {
    let encoded = 0;
    const out = new Array<Float32Array>(job.texts.length);
    const byLength = new Map<number, number[]>();
    const state = job.kind === "job" ? job.state : -1;
    const kept = job.kind === "job" ? states.get(job.stateKey) : undefined;
    if (kept) out[state] = kept;
    const key = (i: number): string | null => (job.kind === "job" && i !== state ? job.texts[i].join(",") : null);
    job.texts.forEach((t, i) => {
      if (out[i]) return;
      const k = key(i);
      const hit = k === null ? undefined : known.get(k);
      if (hit) {
        out[i] = hit;
        return;
      }
      const g = byLength.get(t.length);
      if (g) g.push(i);
      else byLength.set(t.length, [i]);
    });
    const tensors = (rows: number[]): { ids: BigInt64Array; mask: BigInt64Array; dims: [number, number] } => {
      const length = Math.max(...rows.map((m) => job.texts[m].length));
      const ids = new Int32Array(rows.length * length).fill(PAD_ID);
      const mask = new Int32Array(rows.length * length);
      rows.forEach((m, k) => {
        ids.set(job.texts[m], k * length);
        mask.fill(1, k * length, k * length + job.texts[m].length);
      });
      return { ids: int64(ids), mask: int64(mask), dims: [rows.length, length] };
    };
    const keep = (rows: number[], length: number, h: Float32Array): void => {
      encoded += rows.length;
      rows.forEach((m, k) => {
        out[m] = h.slice(k * length * WIDTH, (k * length + job.texts[m].length) * WIDTH);
        const kk = key(m);
        if (kk !== null) known.set(kk, out[m]);
      });
    };
    // Runs are shared between this thread and the helper so that both finish at about the same time.
    const runs = encoderRuns(byLength);
    const [mine, theirs] = helper ? shareRuns(runs, (m) => job.texts[m].length) : [runs, []];
    // The helper gets at most two runs ahead, so a cancel leaves at most two of its runs to finish.
    const helped = (async (): Promise<void> => {
      const sent: Promise<void>[] = [];
      for (const rows of theirs) {
        if (cancelled.has(job.id)) break;
        const t = tensors(rows);
        const done = helper!.run(t.ids, t.mask, t.dims).then((h) => keep(rows, t.dims[1], h));
        done.catch(() => undefined); // a failure is thrown where it is awaited, never left unhandled
        sent.push(done);
        if (sent.length >= 2) await sent[sent.length - 2];
      }
      await Promise.all(sent);
    })().then(
      () => null,
      (err: Error) => err,
    );
    for (const rows of mine) {
      await yieldTurn();
      if (cancelled.has(job.id)) break;
      const t = tensors(rows);
      const r = await encoder.run({ input_ids: new ort.Tensor("int64", t.ids, t.dims), attention_mask: new ort.Tensor("int64", t.mask, t.dims) });
      keep(rows, t.dims[1], r.hidden.data as Float32Array);
    }
    const failed = await helped;
    if (failed) throw failed;
    if (cancelled.has(job.id)) throw new Cancelled();
    return { hidden: out, encoded };
  }

  async function score(job: DeciderJob, hidden: Float32Array[]): Promise<Float32Array[]> {
    const results: Float32Array[] = [];
    const st = hidden[job.state];
    // A token's keys and values depend on that token alone: a question that reads a shorter state reads a prefix.
    const full = st.length / WIDTH;
    const kv = (await stateGraph.run({ state: new ort.Tensor("float32", st, [1, full, WIDTH]) })).state_kv.data as Float32Array;
    for (const q of job.questions) {
      await yieldTurn();
      if (cancelled.has(job.id)) throw new Cancelled();
      const stateLen = Math.min(q.stateLength, st.length / WIDTH);
      const qh = hidden[q.question];
      const n = q.segments.length;
      const lo = Math.max(...q.segments.map((s) => hidden[s].length / WIDTH));
      const opts = new Float32Array(n * lo * WIDTH);
      const omask = new Int32Array(n * lo);
      q.segments.forEach((s, k) => {
        opts.set(hidden[s], k * lo * WIDTH);
        omask.fill(1, k * lo, k * lo + hidden[s].length / WIDTH);
      });
      const r = await scorer.run({
        state: new ort.Tensor("float32", st.subarray(0, stateLen * WIDTH), [1, stateLen, WIDTH]),
        state_kv: new ort.Tensor("float32", kv.subarray(0, stateLen * KV_WIDTH), [1, stateLen, KV_WIDTH]),
        state_mask: new ort.Tensor("int64", ones(stateLen), [1, stateLen]),
        question: new ort.Tensor("float32", qh, [1, qh.length / WIDTH, WIDTH]),
        question_mask: new ort.Tensor("int64", ones(qh.length / WIDTH), [1, qh.length / WIDTH]),
        options: new ort.Tensor("float32", opts, [n, lo, WIDTH]),
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
        const { hidden, encoded } = await encode(job);
        if (job.kind === "job") {
          states.delete(job.stateKey);
          if (job.moreChunks) {
            states.set(job.stateKey, hidden[job.state]);
            if (states.size > MAX_STATES) states.delete(states.keys().next().value as string);
          }
        }
        const scores = job.kind === "job" ? await score(job, hidden) : hidden.map(meanPool);
        port!.postMessage({ kind: "result", id: job.id, scores, encoded } satisfies DeciderReply);
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
