import { existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Question, QuestionKind } from "../../questions/question.js";
import { orderFreeSum, softmax } from "../answer.js";
import { CancelledError, PLAN_PAIRS_PER_STEP, planNow, throwIfAborted, untilAborted, type Calibration, type PlanSteps, type Engine, type ModelInfo, type Plan, type QuestionPlan, type RawScores, type RunOptions } from "../engine.js";
import { EmbedPool, sequenceKey, type Encoder, type Ticket } from "./pool.js";
import { builtinTokenizer, type Tokenizer } from "./tokenizer.js";
import { crossRaw, crossRows, type BareSides, type PairWork } from "./cross.js";

export const MAX_PAIR_TOKENS = 256;
/** Pairs whose features are started in one turn of the event loop (see features()). */
const PAIRS_PER_TURN = 64;

/** Weights of the three similarity features (see models/builtin/model.json). */
export interface Mix {
  option: number;
  joint: number;
  stateQuestion: number;
}

export interface ModelConfig {
  /**
   * What embeds the texts: "student" (the multilingual table in `student`, every language) or
   * "teacher" (Universal Sentence Encoder lite, English only). Default: teacher.
   */
  encoder?: "student" | "teacher";
  /** Folder of the student table, relative to the model folder. */
  student?: string;
  /**
   * Teacher models only: a student model folder (its own model.json and calibration.json),
   * relative to this one, that reads the requests with non-English text.
   */
  multilingual?: string;
  /**
   * Teacher models only: the cross-encoder (models/builtin/cross), which then answers the questions
   * of one of `types` (default: every type) in the requests whose every text reads as one of
   * `languages`; the other questions of such a request are read by the bi-encoder of its language
   * (English, else `multilingual`). Choice and score questions with more than `prefilter` options
   * are ranked by the bi-encoder first and only the top `prefilter` are cross-encoded: they share the
   * bi-encoder's probability of the top `prefilter` as the cross-encoder divides it, and the others
   * keep the bi-encoder's probabilities (withTail).
   */
  cross?: { dir: string; file: string; languages: Language[]; types?: QuestionKind[]; prefilter: number };
  templates: {
    choiceQuestion: string;
    scoreQuestion: string;
    option: string;
    optionKeyOnly: string;
    level: string;
    levelKeyOnly: string;
    yes: string;
    no: string;
    /** Cross-encoder only: what a noul side reads when the caller gave no meaning for it (not billed). */
    yesBare?: string;
    noBare?: string;
  };
  choice: Mix;
  score: Mix;
  noul: { sides: Mix; question: number; bias: number; questionOnly: { question: number; bias: number } };
  /**
   * Contextual calibration against option bias: each feature of a side is also computed with the
   * state replaced by each of `texts` (content-free texts, not read from the request and not
   * billed), and `weight * mean of those` is subtracted from it, so an option (or level, or yes/no
   * side) scores by how much better it matches the state than it matches no content at all.
   * noul: the sides and cos(state, question) of questions with criteria; questionOnly: cos(state,
   * question) of questions without them. A weight of 0 (or no `neutral`) turns it off.
   */
  neutral?: { texts: string[]; choice: number; score: number; noul: number; questionOnly: number };
}

/** Feature values of one side of a pair, and (in `neutral`) the same features with a content-free state. */
export interface Features extends Mix {
  neutral: Mix;
}

const ZERO: Mix = { option: 0, joint: 0, stateQuestion: 0 };

/** choice/score: features per option; noul: the yes side, the no side (null when not given) and cos(state, question). */
export type QuestionFeatures =
  | { kind: "choice" | "score"; options: Features[] }
  | { kind: "noul"; yes: Features | null; no: Features | null; question: number; questionNeutral: number };

export interface BuiltinEngineOptions {
  /** Worker threads running the model (default: 2 when the machine has 2 cores or more). */
  workers?: number;
  /** Folder with model.json and calibration.json (default: models/builtin of this project). */
  modelDir?: string;
  /** Worker script override (tests). */
  workerUrl?: URL;
  /** Overrides model.json's encoder (measurements; the weights and calibration stay those of model.json). */
  encoder?: "student" | "teacher";
  /** false: leave model.json's cross-encoder out (the bi-encoder routes alone, as before it; measurements). */
  cross?: boolean;
}

interface Work {
  pairs: PairWork[][];
  /** Per question: the encoder, weights and calibration that read it. */
  paths: Path[];
  /** The bi-encoder of the request's language: it reads what the cross-encoder does not, and ranks the options of a cross-encoded question with too many. */
  ranker: Path;
}

/** The one path that reads every question of a plan (run() splits a plan by path first). */
function onePath(work: Work): Path {
  const path = work.paths[0] ?? work.ranker;
  if (work.paths.some((p) => p !== path)) throw new Error("a plan read by several paths must be split first");
  return path;
}

/** The plan of some of a plan's questions (indices into it). */
function subPlan(plan: Plan, at: number[]): Plan {
  const work = plan.work as Work;
  return {
    questions: at.map((i) => plan.questions[i]),
    inputTokens: 0,
    work: { pairs: at.map((i) => work.pairs[i]), paths: at.map((i) => work.paths[i]), ranker: work.ranker } satisfies Work,
  };
}

const EMPTY = new Int32Array(0);

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (m: string, name: string) => values[name] ?? m);
}

function concat(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Where the shipped data lives: the nearest models/builtin above this file (works from src/ and dist/). */
function defaultModelDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "models", "builtin");
    if (existsSync(join(candidate, "model.json"))) return candidate;
    const up = dirname(dir);
    if (up === dir) throw new Error("models/builtin/model.json not found");
    dir = up;
  }
}

function readJson<T>(path: string): T {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch (err) {
    throw new Error(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/** One way of reading texts: an encoder with its own weights and calibration. */
interface Path {
  kind: "teacher" | "student" | "cross";
  config: ModelConfig;
  calibration: Calibration;
  pool: EmbedPool;
  /** Token ids of config.neutral.texts. */
  neutral: Int32Array[];
}

const TEACHER_INFO: ModelInfo = {
  backend: "builtin-use-lite",
  description:
    "Built-in Universal Sentence Encoder lite (512-d, English) on CPU: a bi-encoder scoring each option by the cosine similarity of the state and the option text.",
  languages: ["en"],
  maxPairTokens: MAX_PAIR_TOKENS,
};
const STUDENT_INFO: ModelInfo = {
  backend: "builtin-multilingual",
  description:
    "Built-in multilingual student of Universal Sentence Encoder lite (static int8 table, 512-d; English, Spanish, Portuguese, French, German in one space) on CPU: a bi-encoder scoring each option by cosine similarity.",
  languages: ["en", "es", "pt", "fr", "de"],
  maxPairTokens: MAX_PAIR_TOKENS,
};
const CROSS_INFO: ModelInfo = {
  backend: "builtin-cross-encoder",
  description:
    "Built-in cross-encoder on CPU: Universal Sentence Encoder lite fine-tuned to read the state and each option (or level, or yes/no side) as one sequence and score how well they fit; trained on English, Spanish, Portuguese, French and German decision data.",
  languages: ["en", "es", "pt", "fr", "de"],
  maxPairTokens: MAX_PAIR_TOKENS,
};
const CROSS_ROUTED_INFO: ModelInfo = {
  backend: "builtin-cross-encoder+multilingual",
  description:
    "Built-in models on CPU: English requests are read by a cross-encoder (Universal Sentence Encoder lite fine-tuned to read the state and each option, level or yes/no side as one sequence); requests with Spanish, Portuguese, French or German text by the multilingual bi-encoder student.",
  languages: ["en", "es", "pt", "fr", "de"],
  maxPairTokens: MAX_PAIR_TOKENS,
};
const LANGUAGE_NAMES: Record<Language, string> = { en: "English", es: "Spanish", pt: "Portuguese", fr: "French", de: "German" };

/** The cross-encoder reads some question types (of requests in its languages); the bi-encoders read the others. */
function crossTypesInfo(types: readonly QuestionKind[], languages: readonly Language[]): ModelInfo {
  const named = types.map((t) => (t === "noul" ? "yes/no" : t)).join(" and ");
  const where = languages.length === LANGUAGES.length ? "" : ` of requests in ${languages.map((l) => LANGUAGE_NAMES[l]).join(", ")}`;
  return {
    backend: "builtin-use-lite+multilingual+cross",
    description:
      `Built-in models on CPU: ${named} questions${where} are read by a cross-encoder (Universal Sentence Encoder lite fine-tuned to read the state and each candidate answer as one sequence); ` +
      "the other questions by bi-encoders: Universal Sentence Encoder lite (512-d) for English, its multilingual student for requests with Spanish, Portuguese, French or German text.",
    languages: ["en", "es", "pt", "fr", "de"],
    maxPairTokens: MAX_PAIR_TOKENS,
  };
}
const ROUTED_INFO: ModelInfo = {
  backend: "builtin-use-lite+multilingual",
  description:
    "Built-in bi-encoder on CPU: English requests are read by Universal Sentence Encoder lite (512-d); requests with Spanish, Portuguese, French or German text by its multilingual student (a static int8 table distilled into the same space), so mixed-language requests compare texts in one space.",
  languages: ["en", "es", "pt", "fr", "de"],
  maxPairTokens: MAX_PAIR_TOKENS,
};

/**
 * Universal Sentence Encoder lite as a bi-encoder: the state and each hypothesis text are embedded
 * separately (so option, question and state embeddings are cached and shared across requests) and a
 * pair's raw score mixes cosine similarities with weights from model.json.
 *
 * With model.json `multilingual` naming a student model folder, a request is read by the teacher
 * when every text in it reads as English, else (any Spanish, Portuguese, French or German text)
 * wholly by the multilingual student, so that all texts of a pair share one space. Both read the
 * same token ids, so plans, cuts and bills do not depend on the route. Student raw scores are
 * mapped onto the scale of this folder's calibration.json, so each route keeps its own calibration.
 */
export class BuiltinEngine implements Engine {
  readonly info: ModelInfo;
  readonly calibration: Calibration;
  /** The file `calibration` was read from (its default_min_confidence is the one served). */
  readonly calibrationFile: string;
  readonly config: ModelConfig;
  private readonly tokenizer: Tokenizer;
  private readonly bare: BareSides;
  private readonly main: Path;
  private readonly student: Path | null;
  private readonly cross: Path | null;
  /** The languages the cross-encoder reads (see crossSetting). */
  private readonly crossLanguages: Language[];
  /** The question types the cross-encoder reads (see crossSetting). */
  private readonly crossTypes: QuestionKind[];
  private loading: Promise<void> | null = null;

  constructor(opts: BuiltinEngineOptions = {}) {
    const dir = opts.modelDir ?? defaultModelDir();
    this.config = readJson<ModelConfig>(join(dir, "model.json"));
    const mainFile = join(dir, "calibration.json");
    const mainCalibration = readJson<Calibration>(mainFile);
    this.tokenizer = builtinTokenizer();
    this.bare = { yes: this.head(this.config.templates.yesBare ?? ""), no: this.head(this.config.templates.noBare ?? "") };
    const workers = opts.workers ?? Math.min(2, Math.max(1, availableParallelism()));
    const kind = opts.encoder ?? this.config.encoder ?? "teacher";
    const encoder: Encoder = kind === "student" ? { kind: "student", dir: join(dir, this.config.student ?? "multilingual") } : { kind: "teacher" };
    this.main = {
      kind,
      config: this.config,
      calibration: mainCalibration,
      pool: new EmbedPool({ workers, workerUrl: opts.workerUrl, encoder }),
      neutral: this.neutralIds(this.config),
    };
    this.student = null;
    if (opts.encoder === undefined && kind === "teacher" && this.config.multilingual) {
      const sdir = join(dir, this.config.multilingual);
      const sconfig = readJson<ModelConfig>(join(sdir, "model.json"));
      this.student = {
        kind: "student",
        config: sconfig,
        calibration: readJson<Calibration>(join(sdir, "calibration.json")),
        // A table lookup: one worker keeps it off the event loop; more would only copy the table.
        pool: new EmbedPool({ workers: 1, workerUrl: opts.workerUrl, encoder: { kind: "student", dir: join(sdir, sconfig.student ?? ".") } }),
        neutral: this.neutralIds(sconfig),
      };
    }
    const setting = crossSetting();
    const cross = opts.encoder === undefined && opts.cross !== false && kind === "teacher" ? this.config.cross : undefined;
    this.crossLanguages = cross === undefined || setting === "off" ? [] : setting === "model.json" ? cross.languages : [...LANGUAGES];
    this.crossTypes = setting === "model.json" ? (cross?.types ?? [...QUESTION_KINDS]) : [...QUESTION_KINDS];
    this.cross = null;
    let crossFile = "";
    if (cross && this.crossLanguages.length > 0) {
      const cdir = join(dir, cross.dir);
      crossFile = join(cdir, "calibration.json");
      const file = setting === "int8" ? cross.file.replace(/\.onnx$/, "-int8.onnx") : cross.file;
      this.cross = {
        kind: "cross",
        config: this.config,
        calibration: readJson<Calibration>(crossFile),
        pool: new EmbedPool({ workers, workerUrl: opts.workerUrl, encoder: { kind: "cross", file: join(cdir, file) } }),
        neutral: [],
      };
    }
    // One calibration for the engine: the cross-encoder's when it reads every type, else the
    // bi-encoder's; other routes map onto it.
    const crossAll = this.cross !== null && this.crossTypes.length === QUESTION_KINDS.length;
    this.calibration = crossAll && this.cross ? this.cross.calibration : mainCalibration;
    this.calibrationFile = crossAll ? crossFile : mainFile;
    const info = !this.cross
      ? this.student ? ROUTED_INFO : kind === "student" ? STUDENT_INFO : TEACHER_INFO
      : this.crossTypes.length < QUESTION_KINDS.length ? crossTypesInfo(this.crossTypes, this.crossLanguages)
      : this.crossLanguages.length < LANGUAGES.length && this.student ? CROSS_ROUTED_INFO : CROSS_INFO;
    this.info = { ...info };
  }

  load(): Promise<void> {
    this.loading ??= Promise.all(this.paths().map((p) => p.pool.start())).then(
      () => undefined,
      async (err: unknown) => {
        await this.close();
        throw err;
      },
    );
    return this.loading;
  }

  async close(): Promise<void> {
    await Promise.all(this.paths().map((p) => p.pool.close()));
  }

  private paths(): Path[] {
    return [this.main, this.student, this.cross].filter((p): p is Path => p !== null);
  }

  /** Token ids of the content-free texts of a config (empty texts are left out: they have no embedding). */
  private neutralIds(config: ModelConfig): Int32Array[] {
    return (config.neutral?.texts ?? []).map((t) => this.head(t)).filter((ids) => ids.length > 0);
  }

  private head(text: string, limit = MAX_PAIR_TOKENS): Int32Array {
    return Int32Array.from(this.tokenizer.encodeHead(text, limit).ids);
  }

  /**
   * The route of a request: the cross-encoder when every text of it (not the templates) reads as one
   * of its languages (for the questions of its types); else the student when any reads as another
   * language than English; else the English bi-encoder. `ranker` is the bi-encoder of the request's
   * language: it reads the questions the cross-encoder does not, and ranks long option lists.
   */
  private route(state: string, questions: Question[]): { path: Path; ranker: Path } {
    if (!this.student && !this.cross) return { path: this.main, ranker: this.main };
    const texts = [state];
    for (const q of questions) {
      if (q.text !== null) texts.push(q.text);
      if (q.yes !== null) texts.push(q.yes);
      if (q.no !== null) texts.push(q.no);
      for (const o of q.options) texts.push(o.key, o.description ?? "");
    }
    const langs = new Set(texts.map(languageOf));
    const ranker = langs.size === 1 && langs.has("en") ? this.main : (this.student ?? this.main);
    if (this.cross && [...langs].every((l) => this.crossLanguages.includes(l))) return { path: this.cross, ranker };
    return { path: ranker, ranker };
  }

  plan(state: string, questions: Question[]): Plan {
    return planNow(this.planSteps(state, questions));
  }

  *planSteps(state: string, questions: Question[]): PlanSteps {
    const { path, ranker } = this.route(state, questions);
    const head = this.tokenizer.encodeHead(state, MAX_PAIR_TOKENS);
    const stateIds = Int32Array.from(head.ids);
    const plans: QuestionPlan[] = [];
    const work: Work = { pairs: [], paths: [], ranker };
    let inputTokens = 0;
    let step = 0;
    for (const q of questions) {
      if (step >= PLAN_PAIRS_PER_STEP) {
        step = 0;
        yield;
      }
      const reader = path.kind === "cross" && !this.crossTypes.includes(q.kind) ? ranker : path;
      const t = reader.config.templates;
      let pairs: PairWork[];
      if (q.kind === "noul") {
        const question = q.text === null ? EMPTY : this.head(q.text);
        const yes = q.yes === null ? EMPTY : this.head(fill(t.yes, { text: q.yes }));
        const no = q.no === null ? EMPTY : this.head(fill(t.no, { text: q.no }));
        pairs = [this.cut(stateIds, question, yes, no)];
      } else {
        const defaultQuestion = q.kind === "choice" ? t.choiceQuestion : t.scoreQuestion;
        const question = this.head(q.text ?? defaultQuestion);
        pairs = q.options.map((o) => {
          const template =
            q.kind === "choice"
              ? o.description === null ? t.optionKeyOnly : t.option
              : o.description === null ? t.levelKeyOnly : t.level;
          // keyWords: "book_flight" read as "book flight", closer to how the model saw text.
          const keyWords = o.key.replace(/[_-]+/g, " ").trim();
          const option = this.head(fill(template, { key: o.key, keyWords, description: o.description ?? "" }));
          return this.cut(stateIds, question, option, EMPTY);
        });
      }
      const pairTokens = pairs.map((p) => p.state.length + p.question.length + p.option.length + p.no.length);
      inputTokens += pairTokens.reduce((a, b) => a + b, 0);
      step += pairs.length;
      plans.push({ question: q, pairTokens, stateCut: head.cut || pairs.some((p) => p.state.length < stateIds.length) });
      work.pairs.push(pairs);
      work.paths.push(reader);
    }
    return { questions: plans, inputTokens, work };
  }

  /** The cross-encoder's sequences of every question of a plan (see cross.ts). */
  crossRows(plan: Plan): Int32Array[][] {
    const work = plan.work as Work;
    return plan.questions.map((qp, i) => crossRows(qp.question.kind, work.pairs[i], this.bare));
  }

  /** Which encoder reads a question of a plan (by index). */
  encoderOf(plan: Plan, question = 0): Path["kind"] {
    return (plan.work as Work).paths[question].kind;
  }

  /**
   * Fits a pair into MAX_PAIR_TOKENS: the hypothesis (question + option text) is kept whole when it
   * fits, else the question is cut at its end, then the option text (option, then no part); the
   * state gets what is left and is cut at its end.
   */
  private cut(state: Int32Array, question: Int32Array, option: Int32Array, no: Int32Array): PairWork {
    const optionLen = Math.min(option.length, MAX_PAIR_TOKENS);
    const noLen = Math.min(no.length, MAX_PAIR_TOKENS - optionLen);
    const questionLen = Math.min(question.length, MAX_PAIR_TOKENS - optionLen - noLen);
    const stateLen = Math.min(state.length, MAX_PAIR_TOKENS - optionLen - noLen - questionLen);
    return {
      state: state.subarray(0, stateLen),
      question: question.subarray(0, questionLen),
      option: option.subarray(0, optionLen),
      no: no.subarray(0, noLen),
    };
  }

  async run(plan: Plan, opts: RunOptions = {}): Promise<RawScores> {
    await this.load();
    throwIfAborted(opts.signal);
    const work = plan.work as Work;
    const ticket = work.ranker.pool.ticket(opts.lane);
    // A cross-encoded plan may also queue sequences in its ranker's pool.
    const pools = new Set([work.ranker, ...work.paths].map((p) => p.pool));
    const cancel = (): void => {
      for (const pool of pools) pool.cancel(ticket);
    };
    opts.signal?.addEventListener("abort", cancel, { once: true });
    try {
      return await untilAborted(this.scores(plan, ticket), opts.signal);
    } finally {
      opts.signal?.removeEventListener("abort", cancel);
    }
  }

  /** Raw scores of every question, each group of questions read by its path, all on the engine's scale. */
  private async scores(plan: Plan, ticket: Ticket): Promise<RawScores> {
    const work = plan.work as Work;
    const out: number[][] = [];
    const groups = [...new Set(work.paths)].map((path) => ({ path, at: work.paths.flatMap((p, i) => (p === path ? [i] : [])) }));
    await Promise.all(
      groups.map(async ({ path, at }) => {
        const sub = groups.length === 1 ? plan : subPlan(plan, at);
        const raw =
          path.kind === "cross"
            ? await this.crossScores(sub, ticket)
            : (await this.features(sub, false, ticket)).map((f) => this.mix(f, path.config));
        at.forEach((i, k) => (out[i] = this.onMainScale(path, plan.questions[i].question.kind, raw[k])));
      }),
    );
    return out;
  }

  /**
   * Raw scores of another route on the scale of this engine's calibration: the answer math then
   * gives exactly the probabilities of the route's own calibration.
   */
  private onMainScale(path: Path, kind: QuestionFeatures["kind"], raw: number[]): number[] {
    if (path.calibration === this.calibration) return raw;
    const own = path.calibration;
    const main = this.calibration;
    if (kind === "noul") return raw.map((r) => (own.noul.a * r + own.noul.b - main.noul.b) / main.noul.a);
    const ratio = main[kind].temperature / own[kind].temperature;
    return raw.map((r) => r * ratio);
  }

  /** Raw scores from features, with the weights of model.json. */
  mix(f: QuestionFeatures, config: ModelConfig = this.config): number[] {
    const dot = (w: Mix, x: Mix): number => w.option * x.option + w.joint * x.joint + w.stateQuestion * x.stateQuestion;
    const lambda = config.neutral ?? { choice: 0, score: 0, noul: 0, questionOnly: 0 };
    const corrected = (w: Mix, x: Features, l: number): number => dot(w, x) - (l === 0 ? 0 : l * dot(w, x.neutral));
    if (f.kind !== "noul") {
      const w = f.kind === "choice" ? config.choice : config.score;
      const l = lambda[f.kind];
      return f.options.map((x) => corrected(w, x, l));
    }
    const n = config.noul;
    if (f.yes === null && f.no === null) return [n.questionOnly.question * questionOnlyFeature(f, config) + n.questionOnly.bias];
    // A missing side is compared against the question alone.
    const l = lambda.noul;
    const question = f.question - (l === 0 ? 0 : l * f.questionNeutral);
    const q: Features = { option: question, joint: question, stateQuestion: question, neutral: ZERO };
    const side = (x: Features | null): number => (x === null ? dot(n.sides, q) : corrected(n.sides, x, l));
    return [side(f.yes) - side(f.no) + n.question * question + n.bias];
  }

  /**
   * Raw scores of a cross-encoded plan: one logit per sequence (crossRows), read in the cross pool;
   * questions are started a slice of sequences per turn of the event loop, as in features().
   */
  private async crossScores(plan: Plan, ticket: Ticket): Promise<RawScores> {
    const work = plan.work as Work;
    const started: Promise<number[]>[] = [];
    let slice = 0;
    for (let i = 0; i < plan.questions.length; i++) {
      if (slice >= PAIRS_PER_TURN) {
        slice = 0;
        await new Promise((resolve) => setImmediate(resolve));
        if (ticket.cancelled) throw new CancelledError();
      }
      const rows = crossRows(plan.questions[i].question.kind, work.pairs[i], this.bare);
      const p = this.crossQuestion(plan.questions[i], work.pairs[i], rows, work.ranker, ticket);
      p.catch(() => undefined);
      started.push(p);
      slice += rows.length;
    }
    return Promise.all(started);
  }

  private async crossQuestion(qp: QuestionPlan, pairs: PairWork[], rows: Int32Array[], ranker: Path, ticket: Ticket): Promise<number[]> {
    const pool = (this.cross as Path).pool;
    const kind = qp.question.kind;
    const limit = this.config.cross?.prefilter ?? Infinity;
    const ranked = kind !== "noul" && rows.length > limit ? await this.prefilter(qp, pairs, ranker, limit, ticket) : null;
    const logits = await Promise.all(
      rows.map((r, k) => (ranked === null || ranked.kept.has(k) ? pool.embed(r, ticket).then((v) => v[0]) : Number.NEGATIVE_INFINITY)),
    );
    return ranked === null || kind === "noul" ? crossRaw(kind, logits) : this.withTail(kind, logits, ranked.raw, ranker);
  }

  /**
   * Raw scores, on the cross-encoder's scale, of a question whose options were prefiltered: the kept
   * options share the bi-encoder's probability of the kept set as the cross-encoder divides it; the
   * others keep the bi-encoder's own probabilities, so the tail of a long list is not called
   * impossible. The answer stays a kept option: the cross-encoder's best gets at least the kept
   * set's mean probability, and no option outside the set has more than that.
   */
  private withTail(kind: "choice" | "score", logits: number[], biRaw: number[], ranker: Path): number[] {
    const t = (this.cross as Path).calibration[kind].temperature;
    const bi = softmax(biRaw, ranker.calibration[kind].temperature);
    const kept = logits.map((l) => l !== Number.NEGATIVE_INFINITY);
    const keptMass = orderFreeSum(bi.filter((_, k) => kept[k]));
    const within = softmax(logits, t);
    return logits.map((_, k) => t * Math.log(kept[k] ? keptMass * within[k] : bi[k]));
  }

  /**
   * The `limit` options of a question that the bi-encoder ranks highest (ties: the smaller key, so the
   * choice never depends on the order of the options), and the bi-encoder's raw scores of all of them.
   */
  private async prefilter(qp: QuestionPlan, pairs: PairWork[], ranker: Path, limit: number, ticket: Ticket): Promise<{ kept: Set<number>; raw: number[] }> {
    const sub: Plan = { questions: [qp], inputTokens: 0, work: { pairs: [pairs], paths: [ranker], ranker } satisfies Work };
    const [f] = await this.features(sub, false, ticket);
    const raw = this.mix(f, ranker.config);
    const keys = qp.question.options.map((o) => o.key);
    const order = raw.map((_, k) => k).sort((a, b) => raw[b] - raw[a] || (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : 0));
    return { kept: new Set(order.slice(0, limit)), raw };
  }

  /**
   * Cosine features of every pair, read by the plan's route. Only the embeddings that a non-zero
   * weight needs are computed, unless `all` is set (used when tuning the weights).
   */
  async features(plan: Plan, all = false, ticket?: Ticket): Promise<QuestionFeatures[]> {
    const work = plan.work as Work;
    const path = onePath(work);
    if (path.kind === "cross") throw new Error("cosine features are the bi-encoders': build the engine with cross: false");
    const c = path.config;
    const pool = path.pool;
    // A sequence asked for by many pairs of the request (the state, state + question) is embedded
    // and weighted once per request: 12,000 pairs would otherwise each allocate their own copy.
    const memo = new Map<string, Promise<Float64Array | null>>();
    const embed = (ids: Int32Array): Promise<Float64Array | null> => {
      const key = sequenceKey(ids);
      let v = memo.get(key);
      if (!v) memo.set(key, (v = this.embed(pool, ids, ticket)));
      return v;
    };
    const neutral = path.neutral;
    const lambda = (kind: "choice" | "score" | "noul" | "questionOnly"): number => (neutral.length === 0 ? 0 : (c.neutral?.[kind] ?? 0));
    const need = (kind: "choice" | "score" | "noul"): Mix => {
      const w = kind === "noul" ? c.noul.sides : c[kind];
      return all ? { option: 1, joint: 1, stateQuestion: 1 } : w;
    };
    const side = async (p: PairWork, option: Int32Array, w: Mix, withNeutral: boolean): Promise<Features> => {
      if (option.length === 0) return { ...ZERO, neutral: ZERO };
      // The neutral texts' sequences are asked for with the pair's own, not after them: they do not
      // depend on each other, so a new one costs no second round trip to the encoder threads.
      const own = Promise.all([
        embed(p.state),
        w.option !== 0 || w.stateQuestion !== 0 ? embed(option) : null,
        w.joint !== 0 ? embed(concat(p.question, option)) : null,
        w.stateQuestion !== 0 ? embed(concat(p.state, p.question)) : null,
      ]);
      const neutralVectors = withNeutral
        ? Promise.all(neutral.map((n) => Promise.all([embed(n), w.stateQuestion !== 0 ? embed(concat(n, p.question)) : null])))
        : [];
      const [[s, o, j, sq], nv] = await Promise.all([own, neutralVectors]);
      // The same features with each content-free text in place of the state, averaged.
      const ns: Mix[] = nv.map(([ne, nq]) => ({ option: cosine(ne, o), joint: cosine(ne, j), stateQuestion: cosine(nq, o) }));
      const mean = (key: keyof Mix): number => (ns.length === 0 ? 0 : ns.reduce((a, m) => a + m[key], 0) / ns.length);
      return {
        option: cosine(s, o),
        joint: cosine(s, j),
        stateQuestion: cosine(sq, o),
        neutral: { option: mean("option"), joint: mean("joint"), stateQuestion: mean("stateQuestion") },
      };
    };
    const question = async (qp: QuestionPlan, i: number): Promise<QuestionFeatures> => {
        const pairs = work.pairs[i];
        const kind = qp.question.kind;
        if (kind !== "noul") {
          const withNeutral = all || lambda(kind) !== 0;
          return { kind, options: await Promise.all(pairs.map((p) => side(p, p.option, need(kind), withNeutral))) };
        }
        const p = pairs[0];
        const w = need("noul");
        const bare = qp.question.yes === null && qp.question.no === null;
        const withNeutral = all || lambda(bare ? "questionOnly" : "noul") !== 0;
        // mix() falls back on cos(state, question) when a side is missing.
        const wantQuestion = all || c.noul.question !== 0 || qp.question.yes === null || qp.question.no === null;
        const [yes, no, question, questionNeutral] = await Promise.all([
          qp.question.yes === null ? null : side(p, p.option, w, withNeutral),
          qp.question.no === null ? null : side(p, p.no, w, withNeutral),
          wantQuestion ? Promise.all([embed(p.state), embed(p.question)]).then(([s, q]) => cosine(s, q)) : 0,
          wantQuestion && withNeutral && neutral.length > 0
            ? Promise.all([embed(p.question), ...neutral.map((n) => embed(n))]).then(([q, ...ns]) => ns.reduce((a, n) => a + cosine(n, q), 0) / ns.length)
            : 0,
        ]);
        return { kind, yes, no, question, questionNeutral };
    };
    // Questions are started a slice of pairs per turn of the event loop: starting 12,000 pairs at
    // once held the loop for most of a second; the workers stay fed either way.
    const started: Promise<QuestionFeatures>[] = [];
    let slice = 0;
    for (let i = 0; i < plan.questions.length; i++) {
      if (slice >= PAIRS_PER_TURN) {
        slice = 0;
        await new Promise((resolve) => setImmediate(resolve));
        if (ticket?.cancelled) throw new CancelledError();
      }
      const p = question(plan.questions[i], i);
      p.catch(() => undefined);
      started.push(p);
      slice += work.pairs[i].length;
    }
    return Promise.all(started);
  }

  /**
   * Embedding of a sequence of up to MAX_PAIR_TOKENS ids. The teacher reads only its first 128
   * tokens, so longer sequences are read as 128-token chunks on a fixed grid (a state cut at 200 or
   * 230 tokens shares its first chunk) and the chunk embeddings are averaged by length. The student
   * reads whole pairs (one chunk).
   */
  private async embed(pool: EmbedPool, ids: Int32Array, ticket?: Ticket): Promise<Float64Array | null> {
    if (ids.length === 0) return null;
    const size = pool.maxTokens;
    const chunks: Int32Array[] = [];
    for (let at = 0; at < ids.length; at += size) chunks.push(ids.slice(at, at + size));
    const vectors = await Promise.all(chunks.map((chunk) => pool.embed(chunk, ticket)));
    const out = new Float64Array(vectors[0].length);
    vectors.forEach((v, k) => {
      const weight = chunks[k].length;
      for (let d = 0; d < v.length; d++) out[d] += weight * v[d];
    });
    return out;
  }
}

/**
 * SVC_BUILTIN_CROSS: unset, the cross-encoder reads the languages and question types model.json's
 * `cross.languages` and `cross.types` list (those where it measured better than the bi-encoders);
 * "on" makes it read every language and type,
 * "int8" too with its int8 file (faster; answers differ slightly); "off" leaves it out.
 */
function crossSetting(): "model.json" | "on" | "off" | "int8" {
  const v = process.env.SVC_BUILTIN_CROSS;
  if (v === undefined || v === "") return "model.json";
  if (v === "on" || v === "off" || v === "int8") return v;
  throw new Error(`SVC_BUILTIN_CROSS must be on, off or int8, not ${JSON.stringify(v)}`);
}

/** The languages the built-in routes tell apart. */
export type Language = "en" | "es" | "pt" | "fr" | "de";
const LANGUAGES: readonly Language[] = ["en", "es", "pt", "fr", "de"];
const QUESTION_KINDS: readonly QuestionKind[] = ["noul", "choice", "score"];

/**
 * Function words that tell English from Spanish, Portuguese, French and German (words shared with
 * English, such as "a", "me", "no", "die", "in", "do", "as", are left out), plus letters English
 * does not use. A text reads as English unless it has more hits of the others than of English;
 * otherwise as the language with the most hits of its own words and letters.
 */
const ENGLISH_WORDS = new Set(
  "the and is are was were to of for my you your it its this that with on not have has had be been what which how who i we they our from at by does did an or but can could would should will there their them me".split(" "),
);
const SHARED_WITH_ENGLISH = new Set(["me", "no", "die", "in", "do", "as", "a"]);
const wordSet = (words: string): Set<string> => new Set(words.split(" ").filter((w) => !SHARED_WITH_ENGLISH.has(w)));
const WORDS: Record<Exclude<Language, "en">, Set<string>> = {
  es: wordSet("el la los las del que en es un una por para con se mi lo le está estoy pero muy más cuando como sus qué cómo mis"),
  pt: wordSet("não do da dos das em um uma é são meu minha você está foi para com pelo pela isso"),
  fr: wordSet("les des et est une du pour pas je il ne sur avec mon ma mes vous nous ce cette qui au aux été"),
  de: wordSet("der das und ist nicht ich ein eine zu mit sie den dem auf für von wir mein meine ihr haben wurde bitte"),
};
const OTHER_WORDS = new Set(Object.values(WORDS).flatMap((set) => [...set]));
const LETTERS: Record<Exclude<Language, "en">, RegExp> = {
  es: /[ñáíóú¿¡]/giu,
  pt: /[ãõçâêôáíóú]/giu,
  fr: /[çâêôàèùëïœé]/giu,
  de: /[äöüß]/giu,
};
const OTHER_LETTERS = /[ñáéíóúãõçâêôàèùëïüößœ¿¡]/giu;

export function languageOf(text: string): Language {
  let english = 0;
  let other = (text.match(OTHER_LETTERS) ?? []).length;
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  for (const w of words) {
    if (ENGLISH_WORDS.has(w)) english++;
    else if (OTHER_WORDS.has(w)) other++;
  }
  if (other <= english) return "en";
  let best: Language = "en";
  let bestHits = 0;
  for (const l of ["es", "pt", "fr", "de"] as const) {
    const hits = (text.match(LETTERS[l]) ?? []).length + words.filter((w) => WORDS[l].has(w)).length;
    if (hits > bestHits) {
      best = l;
      bestHits = hits;
    }
  }
  return best;
}

/**
 * The feature of a noul question without yes/no criteria: cos(state, question), less
 * `neutral.questionOnly` times cos(content-free text, question).
 */
export function questionOnlyFeature(f: Extract<QuestionFeatures, { kind: "noul" }>, config: ModelConfig): number {
  const l = config.neutral?.questionOnly ?? 0;
  return f.question - (l === 0 ? 0 : l * f.questionNeutral);
}

export function cosine(a: ArrayLike<number> | null, b: ArrayLike<number> | null): number {
  if (a === null || b === null) return 0;
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let d = 0; d < a.length; d++) {
    ab += a[d] * b[d];
    aa += a[d] * a[d];
    bb += b[d] * b[d];
  }
  return aa === 0 || bb === 0 ? 0 : ab / Math.sqrt(aa * bb);
}

export function createBuiltinEngine(opts: BuiltinEngineOptions = {}): BuiltinEngine {
  return new BuiltinEngine(opts);
}
