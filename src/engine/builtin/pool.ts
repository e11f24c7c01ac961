import { Worker } from "node:worker_threads";
import { CancelledError } from "../engine.js";
import { Lanes } from "../lanes.js";
import { WorkerBatches } from "../worker-batches.js";
import { CROSS_MAX_TOKENS } from "./cross.js";

/** One batch for a worker: `lengths[r]` ids of row r, concatenated in `ids`. */
export interface EmbedRequest {
  id: number;
  lengths: Int32Array;
  ids: Int32Array;
}

export type WorkerReply =
  | { kind: "ready"; backend: string }
  | { kind: "failed"; message: string }
  | { kind: "result"; id: number; vectors: Float32Array }
  | { kind: "error"; id: number; message: string };

export const EMBED_DIM = 512;
/**
 * Tokens per batch. Measured on 2 cores with sequences of 15 tokens: 256 to 2,048 tokens per batch
 * drain the same sequences per second within the noise (ONNX encoder: 858-906/s at 256-512, 793-831/s
 * at 2,048; the tfjs graph before it: 72-114/s at 128-2,048), so batches are kept small: another
 * lane's next sequence waits for at most one small batch per worker.
 */
const DEFAULT_BATCH_TOKENS = 256;
/** The model reads at most this many tokens of a sequence (found by measurement: tokens past 128 do not change the output). */
export const MODEL_MAX_TOKENS = 128;
/** The student (a table lookup) reads whole pairs: this many tokens at most. */
export const STUDENT_MAX_TOKENS = 256;

/**
 * What the workers run: the Universal Sentence Encoder (teacher), the multilingual student table, or
 * the cross-encoder (`file`: its ONNX graph), whose "embedding" of a sequence is its one logit.
 */
export type Encoder = { kind: "teacher" } | { kind: "student"; dir: string } | { kind: "cross"; file: string };

/** Sent to a worker as its workerData. */
export interface WorkerSetup {
  encoder: Encoder;
}

export interface PoolOptions {
  workers: number;
  /** Max tokens (rows x row length) per batch. */
  maxBatchTokens?: number;
  /** Max entries of the embedding cache. */
  cacheSize?: number;
  /** Wait this long for more work before dispatching to an idle worker (0: next turn of the loop). */
  batchWindowMs?: number;
  /** Worker script; tests point it elsewhere to check start failures. */
  workerUrl?: URL;
  /** What the workers run (default: the teacher). */
  encoder?: Encoder;
}

/** One run's claim on queued sequences: a run that is cancelled drops the sequences only it waits for. */
export interface Ticket {
  lane: string;
  cancelled: boolean;
}

const ANYONE: Ticket = { lane: "", cancelled: false };

interface Job {
  key: string;
  ids: Int32Array;
  /** The runs waiting for this sequence (it is shared when several ask for it while it is queued). */
  tickets: Ticket[];
  promise: Promise<Float32Array>;
  resolve: (v: Float32Array) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  busy: Job[] | null;
  batchId: number;
  batches: WorkerBatches;
}

/** Ids are < 65536 (8k vocabulary), so one UTF-16 unit per id makes a compact exact key. */
export function sequenceKey(ids: Int32Array): string {
  return String.fromCharCode(...ids);
}

/**
 * Worker threads running the model, a queue batched by sequence length, an LRU of finished
 * embeddings and sharing of in-flight ones. A sequence gets bit-identical numbers whichever request,
 * order or batch it comes in (see dispatch), so answers never depend on option order or load.
 */
export class EmbedPool {
  private readonly slots: Slot[] = [];
  private readonly queue = new Lanes<Job>();
  private readonly cache = new Map<string, Float32Array>();
  private readonly inflight = new Map<string, Job>();
  private readonly maxBatchTokens: number;
  private readonly cacheSize: number;
  private readonly windowMs: number;
  private readonly url: URL;
  private scheduled = false;
  private closed = false;
  /** Set when every worker died and none could be started again. */
  private broken: Error | null = null;
  private nextBatch = 1;
  backend = "";
  readonly encoder: Encoder;
  /** Longest sequence one embed() call takes. */
  readonly maxTokens: number;
  /** Numbers per sequence. */
  private readonly width: number;

  constructor(private readonly opts: PoolOptions) {
    this.maxBatchTokens = opts.maxBatchTokens ?? DEFAULT_BATCH_TOKENS;
    this.cacheSize = opts.cacheSize ?? 20000;
    this.windowMs = opts.batchWindowMs ?? 0;
    this.url = opts.workerUrl ?? new URL("./worker.js", import.meta.url);
    this.encoder = opts.encoder ?? { kind: "teacher" };
    this.maxTokens = { student: STUDENT_MAX_TOKENS, cross: CROSS_MAX_TOKENS, teacher: MODEL_MAX_TOKENS }[this.encoder.kind];
    this.width = this.encoder.kind === "cross" ? 1 : EMBED_DIM;
  }

  /** Starts every worker; rejects (and stops the others) when any of them cannot load the model. */
  async start(): Promise<void> {
    const count = Math.max(1, Math.floor(this.opts.workers));
    try {
      await Promise.all(Array.from({ length: count }, () => this.spawn()));
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  private spawn(): Promise<void> {
    return new Promise((resolve, reject) => {
      let worker: Worker;
      try {
        worker = new Worker(this.url, { workerData: { encoder: this.encoder } satisfies WorkerSetup });
      } catch (err) {
        reject(new Error(`builtin model worker could not start: ${(err as Error).message}`));
        return;
      }
      const slot: Slot = { worker, busy: null, batchId: 0, batches: new WorkerBatches() };
      let ready = false;
      const fail = (message: string): void => {
        if (!ready) {
          ready = true;
          void worker.terminate();
          reject(new Error(`builtin model worker could not start: ${message}`));
          return;
        }
        this.lose(slot, message);
      };
      worker.on("message", (msg: WorkerReply) => {
        switch (msg.kind) {
          case "ready":
            if (this.closed) {
              fail("engine closed while loading");
              break;
            }
            ready = true;
            this.backend = msg.backend;
            this.slots.push(slot);
            resolve();
            this.schedule();
            break;
          case "failed":
            fail(msg.message);
            break;
          case "result":
          case "error":
            slot.batches.ended();
            this.finish(slot, msg);
            break;
        }
      });
      worker.on("error", (err) => fail(err.message));
      worker.on("exit", (code) => {
        if (!this.closed) fail(`worker exited with code ${code}`);
      });
    });
  }

  /** A worker died after loading: fail its batch and replace it so the pool keeps its size. */
  private lose(slot: Slot, message: string): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    this.slots.splice(at, 1);
    const jobs = slot.busy ?? [];
    slot.busy = null;
    for (const job of jobs) this.settle(job, new Error(`builtin model worker failed: ${message}`));
    void slot.worker.terminate();
    if (!this.closed) {
      this.spawn().then(
        () => {
          this.broken = null;
        },
        (err: Error) => {
          if (this.slots.length > 0) return;
          this.broken = err;
          this.failAll(err);
        },
      );
    }
  }

  private failAll(err: Error): void {
    for (const job of this.queue.clear()) this.settle(job, err);
  }

  /** A claim for one run's sequences, queued in `lane`. */
  ticket(lane = ""): Ticket {
    return { lane, cancelled: false };
  }

  /** Drops the queued sequences that only cancelled runs wait for; their promises reject with CancelledError. */
  cancel(ticket: Ticket): void {
    ticket.cancelled = true;
    const dropped = this.queue.remove((job) => job.tickets.every((t) => t.cancelled));
    // One error for all: a cancelled maximal request drops ~25,000 sequences.
    const err = new CancelledError();
    for (const job of dropped) this.settle(job, err);
  }

  /** Embedding of one sequence of 1..maxTokens ids (teacher: unit length, as the model gives it). */
  embed(ids: Int32Array, ticket: Ticket = ANYONE): Promise<Float32Array> {
    if (ids.length === 0 || ids.length > this.maxTokens) {
      return Promise.reject(new Error(`sequence of ${ids.length} tokens cannot be embedded`));
    }
    const key = sequenceKey(ids);
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return Promise.resolve(hit);
    }
    const pending = this.inflight.get(key);
    if (pending) {
      if (!pending.tickets.includes(ticket)) pending.tickets.push(ticket);
      return pending.promise;
    }
    if (this.closed) return Promise.reject(new Error("builtin engine is closed"));
    if (this.broken) return Promise.reject(this.broken);
    let resolve!: (v: Float32Array) => void;
    let reject!: (e: Error) => void;
    const promise = new Promise<Float32Array>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // A cancelled run may stop listening before its sequences are dropped.
    promise.catch(() => undefined);
    const job: Job = { key, ids, tickets: [ticket], promise, resolve, reject };
    this.queue.push(ticket.lane, job);
    this.inflight.set(key, job);
    this.schedule();
    return promise;
  }

  private schedule(): void {
    if (this.scheduled || this.queue.size === 0) return;
    this.scheduled = true;
    const run = (): void => {
      this.scheduled = false;
      this.dispatch();
    };
    // Jobs of one request are enqueued in one turn; waiting a turn lets them share batches.
    if (this.windowMs > 0) setTimeout(run, this.windowMs);
    else setImmediate(run);
  }

  private dispatch(): void {
    for (;;) {
      const idle = this.slots.filter((s) => s.busy === null);
      const turn = this.queue.peek();
      if (idle.length === 0 || turn === null) return;
      // Lanes take turns. In the lane whose turn it is, its oldest job goes first, batched only with
      // jobs of exactly its length: the model's numbers for a row depend on the batch's longest row
      // (padding changes float rounding), so equal lengths give every sequence the numbers it gets
      // alone, whatever else is queued.
      const q = turn.queue;
      const length = q[0].ids.length;
      let same = 0;
      for (const j of q) if (j.ids.length === length) same++;
      const rows = Math.max(1, Math.min(Math.floor(this.maxBatchTokens / length), Math.ceil(same / idle.length)));
      const batch: Job[] = [];
      let kept = 0;
      for (const j of q) {
        if (batch.length < rows && j.ids.length === length) batch.push(j);
        else q[kept++] = j;
      }
      q.length = kept;
      this.queue.served(turn.lane, batch.length);
      this.send(idle[0], batch);
    }
  }

  private send(slot: Slot, batch: Job[]): void {
    const lengths = Int32Array.from(batch, (j) => j.ids.length);
    const ids = new Int32Array(lengths.reduce((a, b) => a + b, 0));
    let at = 0;
    for (const job of batch) {
      ids.set(job.ids, at);
      at += job.ids.length;
    }
    slot.busy = batch;
    slot.batchId = this.nextBatch++;
    const req: EmbedRequest = { id: slot.batchId, lengths, ids };
    slot.batches.started();
    slot.worker.postMessage(req, [lengths.buffer, ids.buffer]);
  }

  private finish(slot: Slot, msg: Extract<WorkerReply, { id: number }>): void {
    const jobs = slot.busy;
    if (!jobs || msg.id !== slot.batchId) return;
    slot.busy = null;
    if (msg.kind === "error") {
      const err = new Error(`builtin model failed: ${msg.message}`);
      for (const job of jobs) this.settle(job, err);
    } else {
      jobs.forEach((job, r) => this.settle(job, msg.vectors.slice(r * this.width, (r + 1) * this.width)));
    }
    this.schedule();
  }

  private settle(job: Job, result: Float32Array | Error): void {
    this.inflight.delete(job.key);
    if (result instanceof Error) {
      job.reject(result);
      return;
    }
    this.cache.set(job.key, result);
    if (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    job.resolve(result);
  }

  get size(): number {
    return this.slots.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    const err = new Error("builtin engine is closed");
    this.failAll(err);
    const slots = this.slots.splice(0);
    for (const slot of slots) for (const job of slot.busy ?? []) this.settle(job, err);
    await Promise.all(slots.map((s) => s.batches.terminate(s.worker)));
  }
}
