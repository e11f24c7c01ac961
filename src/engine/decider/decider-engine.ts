import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { Tokenizer } from "@huggingface/tokenizers";
import type { Question } from "../../questions/question.js";
import {
  CancelledError,
  EngineUnavailableError,
  planNow,
  throwIfAborted,
  untilAborted,
  type Calibration,
  type Engine,
  type ModelInfo,
  type Plan,
  type PlanSteps,
  type QuestionPlan,
  type RawScores,
  type RunOptions,
} from "../engine.js";
import { modelHash } from "../identity.js";
import { useUnigramSegmenter } from "../unigram.js";
import { Lanes } from "../lanes.js";
import { WorkerBatches } from "../worker-batches.js";
import { questionTexts } from "./texts.js";
import type { DeciderJob, DeciderMessage, DeciderReply, DeciderWorkerInit, EmbedJob, ScorerQuestion } from "./worker.js";

export const MAX_PAIR_TOKENS = 256;
/** Specials of a pair as billed: <s> state </s></s> question + option </s>. */
const PAIR_SPECIALS = 4;
/** A question and an option are read up to these many tokens; the state gets the rest of a pair's 256. */
const QUESTION_TOKENS = 128;
const SEGMENT_TOKENS = 64;
/** A state needs no more than its head: tokenizing 64 KiB in full costs far more than the model reads. */
const HEAD_CHARS = 4096;
const TYPES = { noul: 0, choice: 1, score: 2 } as const;
/**
 * A request runs in chunks of questions with about this many segments, each a job of its own: another key's
 * request waits for one chunk, not for a whole 64 x 255 request. The state is encoded once per request.
 */
const CHUNK_SEGMENTS = 64;
/** Texts tokenized per planning step (see planSteps). */
const TEXTS_PER_STEP = 4;

export const BUILTIN_DIR = fileURLToPath(new URL("../../../../models/builtin", import.meta.url));

/** models/builtin/model.json: what the folder holds and how its scores are read. */
export interface DeciderModelFile {
  name: string;
  version: string;
  released: string;
  description: string;
  languages: string[];
  /** Spread of the cumulative-link reading of a scale (see ordinal()). */
  ordinal_spread: number;
  /** How much that spread grows with the variance of the level softmax (see ordinal()); absent: 0, a fixed spread. */
  ordinal_variance?: number;
  encoder: string;
  /** The state's keys and values in the scorer's layers, once per request. */
  state: string;
  scorer: string;
}

interface QuestionWork {
  kind: Question["kind"];
  stateLength: number;
  question: Int32Array;
  segments: Int32Array[];
}

interface Work {
  state: Int32Array;
  questions: QuestionWork[];
}

interface Job {
  id: number;
  lane: string;
  message: DeciderJob | EmbedJob;
  /** Per question: the position of each of its segments in message order (canonical), for mapping back. */
  order: number[][];
  resolve(scores: Float32Array[]): void;
  reject(err: Error): void;
  settled: boolean;
}

/**
 * Cumulative-link reading of a scale's level scores (the same as scripts/train/scorer.py): a position
 * z = sum_i p_i * i with p = softmax(s), its variance v = sum_i p_i * (i - z)^2, then
 * P(level <= k) = sigmoid((k + 0.5 - z) / w) with w = sqrt(spread^2 + variance * v): a peaked softmax reads as a
 * sure answer, also on an inner level, a spread-out one as an unsure one. Returns log-probabilities, so that the
 * calibration's softmax(raw / T) gives these probabilities at T = 1.
 */
export function ordinal(scores: ArrayLike<number>, spread: number, variance = 0): number[] {
  const n = scores.length;
  const max = Math.max(...Array.from(scores));
  const e = Array.from(scores, (s) => Math.exp(s - max));
  const sum = [...e].sort((a, b) => a - b).reduce((a, b) => a + b, 0);
  const z = e.reduce((acc, v, i) => acc + (v / sum) * i, 0);
  const v = e.reduce((acc, x, i) => acc + (x / sum) * (i - z) ** 2, 0);
  const width = Math.sqrt(spread * spread + variance * v);
  const out: number[] = [];
  let prev = 0;
  for (let k = 0; k < n; k++) {
    const cut = k === n - 1 ? 1 : 1 / (1 + Math.exp(-(k + 0.5 - z) / width));
    out.push(Math.log(Math.max(cut - prev, 1e-6)));
    prev = cut;
  }
  return out;
}

function compareIds(a: Int32Array, b: Int32Array): number {
  if (a.length !== b.length) return a.length - b.length;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/**
 * The built-in decision model (models/builtin): multilingual-e5-small reads the state once, each question once and
 * each option, level or yes/no side as a short segment of its own; a small scorer lets every segment attend to the
 * state, the question and itself, never to another option. Both graphs run in one worker thread with ONNX Runtime.
 */
export class DeciderEngine implements Engine {
  readonly info: ModelInfo;
  readonly calibration: Calibration;
  readonly model: DeciderModelFile;
  readonly dir: string;
  private readonly threads: number;
  private tokenizer: Tokenizer | null = null;
  private bos = 0;
  private eos = 2;
  private worker: Worker | null = null;
  private loading: Promise<void> | null = null;
  /** Set by close(): a load still under way then ends its worker instead of serving with it. */
  private closed = false;
  private readonly jobs = new Lanes<Job>();
  private readonly inFlight = new Map<number, Job>();
  private readonly running = new WorkerBatches();
  private nextId = 1;
  private readonly tokenCache = new Map<string, Int32Array>();
  /** Texts the encoder has run on since load (questions and options seen before are kept, not encoded again). */
  encodedTexts = 0;

  constructor(dir: string = BUILTIN_DIR, opts: { threads?: number } = {}) {
    this.dir = resolve(dir);
    this.threads = opts.threads && opts.threads > 0 ? opts.threads : Math.min(2, Math.max(1, availableParallelism()));
    this.model = JSON.parse(readFileSync(join(this.dir, "model.json"), "utf8")) as DeciderModelFile;
    this.calibration = JSON.parse(readFileSync(join(this.dir, "calibration.json"), "utf8")) as Calibration;
    this.info = {
      backend: this.model.name,
      description: this.model.description,
      languages: this.model.languages,
      maxPairTokens: MAX_PAIR_TOKENS,
      hash: "",
    };
  }

  load(): Promise<void> {
    this.loading ??= this.start().catch((err: Error) => {
      this.loading = null;
      throw new Error(`cannot load the built-in model in ${this.dir}: ${err.message}`);
    });
    return this.loading;
  }

  private async start(): Promise<void> {
    const json = JSON.parse(readFileSync(join(this.dir, "tokenizer.json"), "utf8")) as object;
    this.tokenizer = new Tokenizer(json, {});
    useUnigramSegmenter(this.tokenizer, json);
    this.bos = this.tokenizer.token_to_id("<s>") ?? 0;
    // The tokenizer's first calls compile its code (~100 ms): do it now, not inside a request's planning.
    for (let i = 0; i < 200; i++) this.tokenizer.encode(`Warm-up ${i}: ¿Qué pasó? L'été dernier, Größe ${i * 7}.`, { add_special_tokens: false });
    this.eos = this.tokenizer.token_to_id("</s>") ?? 2;
    const init: DeciderWorkerInit = {
      encoderPath: join(this.dir, this.model.encoder),
      statePath: join(this.dir, this.model.state),
      scorerPath: join(this.dir, this.model.scorer),
      threads: this.threads,
    };
    const worker = new Worker(new URL("./worker.js", import.meta.url), { workerData: init });
    await new Promise<void>((ok, fail) => {
      const onExit = (code: number): void => fail(new Error(`the inference worker exited with code ${code} while loading`));
      worker.once("error", fail);
      worker.once("exit", onExit);
      worker.once("message", (msg: DeciderReply) => {
        worker.off("error", fail);
        worker.off("exit", onExit);
        if (msg.kind !== "ready") {
          void worker.terminate();
          return fail(new Error(msg.kind === "load-error" ? msg.message : "unexpected message from the inference worker"));
        }
        ok();
      });
    });
    if (this.closed) {
      await worker.terminate();
      throw new Error("the engine was closed while loading");
    }
    worker.on("message", (m: DeciderReply) => this.onReply(m));
    worker.on("error", (err) => this.failAll(new Error(`inference worker failed: ${err.message}`)));
    worker.on("exit", (code) => {
      this.running.reset();
      this.failAll(new EngineUnavailableError(`inference worker exited (code ${code})`));
      if (this.worker !== worker || this.closed) return;
      // A crashed worker is replaced: requests get 503 (retry) until the model is loaded again.
      this.worker = null;
      this.loading = null;
      this.load().catch((err: Error) => process.stderr.write(`svc: reloading the built-in model failed: ${err.message}\n`));
    });
    this.worker = worker;
    this.info.hash = modelHash(this.dir, ["model.json", "calibration.json", "tokenizer.json", this.model.encoder, this.model.state, this.model.scorer]);
  }

  async close(): Promise<void> {
    this.closed = true;
    // A load under way finishes first (and, seeing `closed`, ends the worker it started): closing while the
    // model loads must not leave a worker thread that keeps the process alive.
    await this.loading?.catch(() => undefined);
    const worker = this.worker;
    this.worker = null;
    this.loading = null;
    this.failAll(new Error("the engine was closed"));
    if (worker) await this.running.terminate(worker);
  }

  /** Content token ids of a text (no specials), cut to `max`; cached, since questions and options repeat. */
  tokenize(text: string, max = Number.MAX_SAFE_INTEGER): Int32Array {
    const tok = this.tokenizer;
    if (!tok) throw new EngineUnavailableError("the built-in model is not loaded");
    const head = text.length > HEAD_CHARS ? text.slice(0, HEAD_CHARS) : text;
    let ids = this.tokenCache.get(head);
    if (!ids) {
      ids = Int32Array.from(tok.encode(head, { add_special_tokens: false }).ids);
      if (this.tokenCache.size >= 50_000) this.tokenCache.delete(this.tokenCache.keys().next().value as string);
      this.tokenCache.set(head, ids);
    }
    return ids.length > max ? ids.subarray(0, max) : ids;
  }

  plan(state: string, questions: Question[]): Plan {
    return planNow(this.planSteps(state, questions));
  }

  *planSteps(state: string, questions: Question[]): PlanSteps {
    const stateIds = this.tokenize(state, MAX_PAIR_TOKENS);
    const plans: QuestionPlan[] = [];
    const work: Work = { state: stateIds, questions: [] };
    let inputTokens = 0;
    let step = 0;
    for (const q of questions) {
      // A new text takes 2-3 µs a token to tokenize (unigram.ts), a long option ~0.2 ms: a step tokenizes a few dozen texts, not PLAN_PAIRS_PER_STEP pairs.
      if (step >= TEXTS_PER_STEP) {
        step = 0;
        yield;
      }
      const texts = questionTexts(q);
      const question = this.tokenize(texts.question, QUESTION_TOKENS);
      const segments = texts.segments.map((s) => this.tokenize(s, SEGMENT_TOKENS));
      const longest = Math.max(...segments.map((s) => s.length));
      // noul: one pair, billed with the caller's meanings (the bare "yes"/"no" sides are not billed)
      const billedSides = q.kind === "noul" ? (q.yes !== null || q.no !== null ? segments[0].length + segments[1].length : 0) : 0;
      const room = MAX_PAIR_TOKENS - PAIR_SPECIALS - question.length - (q.kind === "noul" ? billedSides : longest);
      const stateLength = Math.max(0, Math.min(stateIds.length, room));
      const pairTokens =
        q.kind === "noul"
          ? [PAIR_SPECIALS + stateLength + question.length + billedSides]
          : segments.map((s) => PAIR_SPECIALS + stateLength + question.length + s.length);
      for (const n of pairTokens) inputTokens += n;
      step += segments.length + 1;
      plans.push({ question: q, pairTokens, stateCut: stateLength < stateIds.length });
      work.questions.push({ kind: q.kind, stateLength, question, segments });
    }
    return { questions: plans, inputTokens, work };
  }

  private wrap(ids: Int32Array): Int32Array {
    const out = new Int32Array(ids.length + 2);
    out[0] = this.bos;
    out.set(ids, 1);
    out[ids.length + 1] = this.eos;
    return out;
  }

  /** The job for the worker: distinct texts in an order that depends only on the set of texts, never on option order. */
  private job(work: Work, questions: QuestionWork[], stateKey: string, moreChunks: boolean): { message: Omit<DeciderJob, "id">; order: number[][] } {
    const longestState = Math.max(0, ...work.questions.map((q) => q.stateLength));
    const all = new Map<string, Int32Array>();
    const add = (ids: Int32Array): string => {
      const key = ids.join(",");
      if (!all.has(key)) all.set(key, ids);
      return key;
    };
    const stateText = add(this.wrap(work.state.subarray(0, longestState)));
    const qs = questions.map((q) => ({ q: add(this.wrap(q.question)), segs: q.segments.map((s) => add(this.wrap(s))) }));
    const sorted = [...all.entries()].sort((a, b) => compareIds(a[1], b[1]));
    const index = new Map(sorted.map(([k], i) => [k, i]));
    const order: number[][] = [];
    const scorerQuestions: ScorerQuestion[] = questions.map((q, i) => {
      const segs = qs[i].segs.map((k, at) => ({ text: index.get(k)!, at }));
      segs.sort((a, b) => a.text - b.text || a.at - b.at);
      order.push(segs.map((s) => s.at));
      return { type: TYPES[q.kind], stateLength: q.stateLength + (q.stateLength === longestState ? 2 : 1), question: index.get(qs[i].q)!, segments: segs.map((s) => s.text) };
    });
    return {
      message: { kind: "job", texts: sorted.map(([, ids]) => ids), state: index.get(stateText)!, questions: scorerQuestions, stateKey, moreChunks },
      order,
    };
  }

  async run(plan: Plan, opts: RunOptions = {}): Promise<RawScores> {
    throwIfAborted(opts.signal);
    if (!this.worker) throw new EngineUnavailableError("the built-in model is not loaded");
    const work = plan.work as Work;
    if (work.questions.length === 0) return [];
    // A question's segments in an order that depends only on their texts, cut into pieces of at most
    // CHUNK_SEGMENTS (an option is scored on its own, so a long list may be split), pieces grouped into chunks.
    const pieces = work.questions.flatMap((q, qi) => {
      const perm = q.segments.map((_, i) => i).sort((a, b) => compareIds(q.segments[a], q.segments[b]) || a - b);
      const out: { qi: number; idx: number[]; work: QuestionWork }[] = [];
      for (let from = 0; from < perm.length; from += CHUNK_SEGMENTS) {
        const idx = perm.slice(from, from + CHUNK_SEGMENTS);
        out.push({ qi, idx, work: { ...q, segments: idx.map((i) => q.segments[i]) } });
      }
      return out;
    });
    const chunks: (typeof pieces)[] = [[]];
    let size = 0;
    for (const p of pieces) {
      if (size > 0 && size + p.idx.length > CHUNK_SEGMENTS) {
        chunks.push([]);
        size = 0;
      }
      chunks[chunks.length - 1].push(p);
      size += p.idx.length;
    }
    const stateKey = `s${this.nextId}`;
    const lane = opts.lane ?? "";
    const jobs: Job[] = [];
    const orders: number[][] = [];
    const parts = chunks.map((chunk, c) => {
      const { message, order } = this.job(work, chunk.map((p) => p.work), stateKey, c < chunks.length - 1);
      orders.push(...order);
      const id = this.nextId++;
      return new Promise<Float32Array[]>((ok, fail) => {
        const job: Job = { id, lane, message: { ...message, id }, order, resolve: ok, reject: fail, settled: false };
        jobs.push(job);
        this.jobs.push(lane, job);
      });
    });
    const done = Promise.all(parts).then((xs) => xs.flat());
    done.catch(() => undefined);
    const { signal } = opts;
    const cancel = (): void => {
      for (const job of jobs) {
        this.settle(job, new CancelledError());
        if (this.inFlight.has(job.id)) this.post({ kind: "cancel", id: job.id });
      }
      this.jobs.remove((j) => jobs.includes(j));
    };
    signal?.addEventListener("abort", cancel, { once: true });
    this.pump();
    try {
      const scores = await untilAborted(done, signal);
      const raws = work.questions.map((q) => new Array<number>(q.segments.length));
      pieces.forEach((p, n) => orders[n].forEach((at, k) => (raws[p.qi][p.idx[at]] = scores[n][k])));
      return work.questions.map((q, i) => {
        const raw = raws[i];
        if (q.kind === "noul") return [raw[0] - raw[1]];
        if (q.kind === "score") return ordinal(raw, this.model.ordinal_spread, this.model.ordinal_variance ?? 0);
        return raw;
      });
    } finally {
      signal?.removeEventListener("abort", cancel);
    }
  }

  /**
   * e5's own sentence vectors ("query: " + text, mean-pooled, L2-normalised): the plain-similarity baseline of
   * `svc eval --public`. Runs as a job of its own lane.
   */
  async embed(texts: string[]): Promise<Float32Array[]> {
    if (!this.worker) throw new EngineUnavailableError("the built-in model is not loaded");
    const id = this.nextId++;
    const message: EmbedJob = { kind: "embed", id, texts: texts.map((t) => this.wrap(this.tokenize(`query: ${t}`, 510))) };
    const done = new Promise<Float32Array[]>((ok, fail) => {
      this.jobs.push("embed", { id, lane: "embed", message, order: [], resolve: ok, reject: fail, settled: false });
    });
    this.pump();
    return done;
  }

  private post(msg: DeciderMessage): void {
    this.worker?.postMessage(msg);
  }

  /** One job in the worker at a time; the next one is the turn of the lane that waited longest. */
  private pump(): void {
    while (this.inFlight.size === 0 && this.worker) {
      const turn = this.jobs.peek();
      if (!turn) return;
      const job = turn.queue.shift()!;
      this.jobs.served(turn.lane, 1);
      if (job.settled) continue;
      this.inFlight.set(job.id, job);
      this.running.started();
      this.post(job.message);
    }
  }

  private onReply(msg: DeciderReply): void {
    if (msg.kind === "ready" || msg.kind === "load-error") return;
    this.running.ended();
    const job = this.inFlight.get(msg.id);
    this.inFlight.delete(msg.id);
    this.pump();
    if (!job) return;
    if (msg.kind === "result") {
      this.encodedTexts += msg.encoded;
      if (!job.settled) {
        job.settled = true;
        job.resolve(msg.scores);
      }
    } else if (msg.kind === "run-error") this.settle(job, new Error(`inference failed: ${msg.message}`));
    else this.settle(job, new CancelledError());
  }

  private settle(job: Job, err: Error): void {
    if (job.settled) return;
    job.settled = true;
    job.reject(err);
  }

  private failAll(err: Error): void {
    for (const job of this.inFlight.values()) this.settle(job, err);
    this.inFlight.clear();
    for (const job of this.jobs.clear()) this.settle(job, err);
  }
}

export function createDeciderEngine(opts: { threads?: number; dir?: string } = {}): DeciderEngine {
  return new DeciderEngine(opts.dir ?? BUILTIN_DIR, opts);
}
