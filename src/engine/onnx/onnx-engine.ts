import { existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { basename, join, resolve } from "node:path";
import { Worker } from "node:worker_threads";
import type { Question } from "../../questions/question.js";
import {
  CancelledError,
  EngineUnavailableError,
  PLAN_PAIRS_PER_STEP,
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
import { Lanes } from "../lanes.js";
import { WorkerBatches } from "../worker-batches.js";
import {
  checkFolder,
  findModelFile,
  readJsonFile,
  readLabels,
  readSvcModel,
  svcModelDefaults,
  type NliLabels,
  type SvcModelFile,
  type Templates,
} from "./model-folder.js";
import { PairTokenizer, type PairIds } from "./pair-tokenizer.js";
import type { BatchRequest, WorkerInit, WorkerReply } from "./worker.js";

export const MAX_PAIR_TOKENS = 256;
/** Pairs are padded to a multiple of this, so a pair's padded length depends only on itself (see group()). */
const LENGTH_STEP = 16;
/** Padded tokens per batch: bounds attention memory (rows * length^2 per head) while keeping batches wide. */
const BATCH_TOKENS = 4096;
/** Batches handed to the worker at once: one running, one ready, so the worker never waits for the main thread. */
const PIPELINE = 2;

export interface OnnxEngineOptions {
  /** Intra-op threads of the ONNX Runtime session (default: 2, or 1 on a single core). */
  threads?: number;
  /** The ONNX file inside the folder (default: the quantized variant when present, see MODEL_FILES). */
  file?: string;
}

interface Work {
  pairs: PairIds[][];
}

interface Job {
  lane: string;
  pairs: PairIds[];
  logits: Float32Array[];
  remaining: number;
  failed: boolean;
  resolve(logits: Float32Array[]): void;
  reject(err: Error): void;
}

interface Row {
  job: Job;
  index: number;
}

interface Batch {
  length: number;
  rows: Row[];
}

interface Loaded {
  tokenizer: PairTokenizer;
  labels: NliLabels;
  templates: Templates;
  worker: Worker;
  inputNames: string[];
}

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (m: string, name: string) => values[name] ?? m);
}

/**
 * An NLI cross-encoder in the Hugging Face folder layout. Every (state, hypothesis) pair is read
 * together by the model; the hypothesis is built from the question and one option (see
 * svc-model.json). Inference runs in one worker thread; pairs of concurrent requests share padded batches.
 */
export class OnnxEngine implements Engine {
  readonly info: ModelInfo;
  private svcModel: SvcModelFile;
  /** Set when svc-model.json could not be read at construction; load() rejects with it. */
  private readonly svcModelError: Error | null = null;
  private readonly dir: string;
  private readonly threads: number;
  private readonly file: string | undefined;
  private loading: Promise<void> | null = null;
  private loaded: Loaded | null = null;
  private queue: Job[] = [];
  private scheduled = false;
  private nextBatch = 1;
  private readonly inFlight = new Map<number, Row[]>();
  /** Batches in the worker (it is terminated only between them). */
  private readonly running = new WorkerBatches();
  /** Batches not yet sent, queued by lane (see group()). */
  private readonly batches = new Lanes<Batch>();
  /** Counters for benches and tests: batches sent to the worker, pairs in them, tokens including padding. */
  readonly stats = { batches: 0, pairs: 0, paddedTokens: 0 };

  constructor(dir: string, opts: OnnxEngineOptions = {}) {
    this.dir = resolve(dir);
    this.threads = opts.threads && opts.threads > 0 ? opts.threads : Math.min(2, Math.max(1, availableParallelism()));
    this.file = opts.file || undefined;
    try {
      this.svcModel = readSvcModel(this.dir);
    } catch (err) {
      this.svcModel = svcModelDefaults();
      this.svcModelError = err as Error;
    }
    this.info = {
      backend: `onnx:${basename(this.dir)}`,
      description: this.describe(null),
      languages: this.svcModel.languages,
      maxPairTokens: MAX_PAIR_TOKENS,
      hash: "",
    };
  }

  get calibration(): Calibration {
    return this.svcModel.calibration;
  }

  private describe(file: string | null): string {
    if (this.svcModel.description) return this.svcModel.description;
    let source = basename(this.dir);
    try {
      const m = JSON.parse(readFileSync(join(this.dir, "manifest.json"), "utf8")) as { hub_id?: string; revision?: string };
      if (m.hub_id) source = `${m.hub_id}${m.revision ? `@${m.revision.slice(0, 12)}` : ""}`;
    } catch {
      /* not a pulled model */
    }
    return `NLI cross-encoder ${source}${file ? ` (${file})` : ""} on CPU with ONNX Runtime: reads the state and each question + option together and scores entailment.`;
  }

  load(): Promise<void> {
    this.loading ??= this.start().catch((err: Error) => {
      this.loading = null;
      throw new Error(`cannot load the ONNX model in ${this.dir}: ${err.message}`);
    });
    return this.loading;
  }

  private async start(): Promise<void> {
    checkFolder(this.dir);
    if (this.svcModelError) throw this.svcModelError;
    this.svcModel = readSvcModel(this.dir);
    const { labels, padTokenId } = readLabels(this.dir);
    const file = findModelFile(this.dir, this.file);
    const tokenizerJson = readJsonFile(join(this.dir, "tokenizer.json"), "tokenizer.json");
    const configPath = join(this.dir, "tokenizer_config.json");
    const tokenizerConfig = existsSync(configPath) ? readJsonFile(configPath, "tokenizer_config.json") : {};
    let tokenizer: PairTokenizer;
    try {
      tokenizer = PairTokenizer.fromJson(tokenizerJson as object, tokenizerConfig as object, padTokenId, MAX_PAIR_TOKENS);
    } catch (err) {
      throw new Error(`tokenizer.json cannot be used: ${(err as Error).message}`);
    }
    const templates = this.svcModel.templates[this.svcModel.template_language];
    const { worker, inputNames } = await this.startWorker(join(this.dir, file), labels);
    this.info.description = this.describe(file);
    this.info.languages = this.svcModel.languages;
    this.info.hash = modelHash(this.dir, ["svc-model.json", "config.json", "tokenizer.json", "tokenizer_config.json", file]);
    this.loaded = { tokenizer, labels, templates, worker, inputNames };
  }

  private startWorker(modelPath: string, labels: NliLabels): Promise<{ worker: Worker; inputNames: string[] }> {
    const init: WorkerInit = { modelPath, threads: this.threads };
    const worker = new Worker(new URL("./worker.js", import.meta.url), { workerData: init });
    return new Promise((resolveStart, rejectStart) => {
      const onExit = (code: number) => rejectStart(new Error(`the inference worker exited with code ${code} while loading`));
      worker.once("error", rejectStart);
      worker.once("exit", onExit);
      worker.once("message", (msg: WorkerReply) => {
        worker.off("error", rejectStart);
        worker.off("exit", onExit);
        if (msg.kind !== "ready") {
          void worker.terminate();
          return rejectStart(new Error(msg.kind === "load-error" ? msg.message : "unexpected message from the inference worker"));
        }
        if (msg.outputWidth !== null && msg.outputWidth !== labels.count) {
          void worker.terminate();
          return rejectStart(new Error(`the model outputs ${msg.outputWidth} logits but config.json has ${labels.count} labels`));
        }
        worker.on("message", (m: WorkerReply) => this.onReply(m));
        worker.on("error", (err) => this.failAll(new Error(`inference worker failed: ${err.message}`)));
        worker.on("exit", (code) => {
          this.running.reset();
          this.failAll(new EngineUnavailableError(`inference worker exited (code ${code})`));
          if (this.loaded?.worker !== worker) return;
          // A crashed worker is replaced: requests get 503 (retry) until the model is loaded again.
          this.loaded = null;
          this.loading = null;
          this.load().catch((err: Error) => process.stderr.write(`svc: reloading the ONNX model failed: ${err.message}\n`));
        });
        resolveStart({ worker, inputNames: msg.inputNames });
      });
    });
  }

  async close(): Promise<void> {
    const loaded = this.loaded;
    this.loaded = null;
    this.loading = null;
    this.failAll(new Error("the engine was closed"));
    if (loaded) await this.running.terminate(loaded.worker);
  }

  private ready(): Loaded {
    if (!this.loaded) throw new EngineUnavailableError("the ONNX engine is not loaded");
    return this.loaded;
  }

  /** The token ids of a text, for tests and tools that check counts against the tokenizer. */
  tokenize(text: string): Int32Array {
    return this.ready().tokenizer.encode(text);
  }

  /** Special tokens around every pair (e.g. 3 for [CLS] A [SEP] B [SEP]). */
  get specialTokens(): number {
    return this.ready().tokenizer.layout.specials;
  }

  /** The hypothesis texts of a question, one per pair, before tokenization. */
  hypotheses(q: Question): string[][] {
    const t = this.ready().templates;
    if (q.kind === "noul") {
      return [[q.text ?? "", q.yes === null ? "" : fill(t.yes, { text: q.yes }), q.no === null ? "" : fill(t.no, { text: q.no })]];
    }
    const question = q.text ?? (q.kind === "choice" ? t.choice_question : t.score_question);
    return q.options.map((o) => {
      const template =
        q.kind === "choice"
          ? o.description === null ? t.option_key_only : t.option
          : o.description === null ? t.level_key_only : t.level;
      return [question, fill(template, { key: o.key, description: o.description ?? "" })];
    });
  }

  plan(state: string, questions: Question[]): Plan {
    return planNow(this.planSteps(state, questions));
  }

  *planSteps(state: string, questions: Question[]): PlanSteps {
    const { tokenizer } = this.ready();
    const stateIds = tokenizer.encode(state);
    const work: Work = { pairs: [] };
    const plans: QuestionPlan[] = [];
    let inputTokens = 0;
    let step = 0;
    for (const q of questions) {
      if (step >= PLAN_PAIRS_PER_STEP) {
        step = 0;
        yield;
      }
      const pairs = this.hypotheses(q).map((parts) => tokenizer.pair(stateIds, tokenizer.hypothesis(parts)));
      const pairTokens = pairs.map((p) => p.length);
      for (const n of pairTokens) inputTokens += n;
      step += pairs.length;
      plans.push({ question: q, pairTokens, stateCut: pairs.some((p) => p.state.length < stateIds.length) });
      work.pairs.push(pairs);
    }
    return { questions: plans, inputTokens, work };
  }

  async run(plan: Plan, opts: RunOptions = {}): Promise<RawScores> {
    const { labels } = this.ready();
    throwIfAborted(opts.signal);
    const work = plan.work as Work;
    const logits = await this.submit(work.pairs.flat(), opts);
    let at = 0;
    return plan.questions.map((qp, i) => {
      const rows = logits.slice(at, at + work.pairs[i].length);
      at += rows.length;
      if (qp.question.kind === "noul") return [rows[0][labels.entailment] - rows[0][labels.contradiction]];
      return rows.map((r) => r[labels.entailment]);
    });
  }

  private submit(pairs: PairIds[], opts: RunOptions): Promise<Float32Array[]> {
    if (pairs.length === 0) return Promise.resolve([]);
    let job!: Job;
    const done = new Promise<Float32Array[]>((resolveJob, rejectJob) => {
      job = {
        lane: opts.lane ?? "",
        pairs,
        logits: new Array<Float32Array>(pairs.length),
        remaining: pairs.length,
        failed: false,
        resolve: resolveJob,
        reject: rejectJob,
      };
      this.queue.push(job);
      // Requests planned in the same turn of the event loop are grouped together; later ones join
      // whatever is queued when the worker next has room (see pump()), so batching costs no fixed delay.
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
    const { signal } = opts;
    if (!signal) return done;
    // A cancelled job's rows are skipped; batches left with none are dropped unsent.
    const cancel = (): void => {
      this.fail(job, new CancelledError());
      this.batches.remove((b) => b.rows.every((r) => r.job.failed));
    };
    signal.addEventListener("abort", cancel, { once: true });
    return untilAborted(done, signal).finally(() => signal.removeEventListener("abort", cancel));
  }

  /**
   * Groups the queued requests' pairs into batches, per lane. Pairs are grouped by their length rounded up to
   * LENGTH_STEP (sorting by length keeps padding small) and each pair is padded to its own group's
   * length, never to a longer neighbour's: so a pair is computed on the same input whether it runs
   * alone or with other requests, and the same request gets the same numbers.
   */
  private group(): void {
    const jobs = this.queue;
    this.queue = [];
    const lanes = new Map<string, Map<number, Row[]>>();
    for (const job of jobs) {
      if (job.failed) continue;
      let groups = lanes.get(job.lane);
      if (!groups) lanes.set(job.lane, (groups = new Map()));
      for (let index = 0; index < job.pairs.length; index++) {
        const p = job.pairs[index];
        const length = Math.min(MAX_PAIR_TOKENS, Math.max(LENGTH_STEP, Math.ceil(p.length / LENGTH_STEP) * LENGTH_STEP));
        let g = groups.get(length);
        if (!g) groups.set(length, (g = []));
        g.push({ job, index });
      }
    }
    for (const [lane, groups] of lanes) {
      for (const length of [...groups.keys()].sort((a, b) => a - b)) {
        const rows = groups.get(length)!;
        const perBatch = Math.max(1, Math.floor(BATCH_TOKENS / length));
        for (let from = 0; from < rows.length; from += perBatch) this.batches.push(lane, { length, rows: rows.slice(from, from + perBatch) });
      }
    }
  }

  /**
   * Builds and sends batches while fewer than PIPELINE are in the worker. Requests queued while the
   * worker was busy are grouped now, so concurrent requests share batches under load. Building lazily
   * keeps the main thread's work per tick to one batch (a 64 x 255 request would otherwise block it
   * for ~100 ms), and serving lanes in turn lets one key's small request overtake another key's big one.
   */
  private pump(): void {
    const loaded = this.loaded;
    if (!loaded) {
      this.failAll(new Error("the ONNX engine is not loaded"));
      return;
    }
    if (this.queue.length > 0 && this.inFlight.size < PIPELINE) this.group();
    for (let turn = this.batches.peek(); turn !== null && this.inFlight.size < PIPELINE; turn = this.batches.peek()) {
      const batch = turn.queue.shift()!;
      this.batches.served(turn.lane, 1);
      const rows = batch.rows.filter((r) => !r.job.failed);
      if (rows.length === 0) continue;
      const { length } = batch;
      const size = rows.length * length;
      const ids = new Int32Array(size).fill(loaded.tokenizer.padId);
      const types = new Int32Array(size);
      const mask = new Int32Array(size);
      rows.forEach((r, k) => {
        const p = r.job.pairs[r.index];
        loaded.tokenizer.write(p, ids, types, k * length);
        mask.fill(1, k * length, k * length + p.length);
      });
      const id = this.nextBatch++;
      this.inFlight.set(id, rows);
      this.stats.batches++;
      this.stats.pairs += rows.length;
      this.stats.paddedTokens += size;
      const withTypes = loaded.inputNames.includes("token_type_ids");
      const req: BatchRequest = { id, rows: rows.length, length, ids, mask, types: withTypes ? types : null };
      this.running.started();
      loaded.worker.postMessage(req, withTypes ? [ids.buffer, mask.buffer, types.buffer] : [ids.buffer, mask.buffer]);
    }
  }

  private onReply(msg: WorkerReply): void {
    if (msg.kind !== "result" && msg.kind !== "run-error") return;
    this.running.ended();
    const rows = this.inFlight.get(msg.id);
    if (!rows) return;
    this.inFlight.delete(msg.id);
    this.pump();
    if (msg.kind === "run-error") {
      for (const r of rows) this.fail(r.job, new Error(`inference failed: ${msg.message}`));
      return;
    }
    rows.forEach((r, k) => {
      if (r.job.failed) return;
      r.job.logits[r.index] = msg.logits.subarray(k * msg.width, (k + 1) * msg.width);
      if (--r.job.remaining === 0) r.job.resolve(r.job.logits);
    });
  }

  private fail(job: Job, err: Error): void {
    if (job.failed) return;
    job.failed = true;
    job.reject(err);
  }

  private failAll(err: Error): void {
    for (const rows of this.inFlight.values()) for (const r of rows) this.fail(r.job, err);
    this.inFlight.clear();
    for (const j of this.queue) this.fail(j, err);
    this.queue = [];
    this.batches.clear();
  }
}

export function createOnnxEngine(dir: string, opts: OnnxEngineOptions = {}): OnnxEngine {
  return new OnnxEngine(dir, opts);
}
