import { createHash } from "node:crypto";
import { answerNumbers } from "../engine/answer.js";
import type { Calibration, Engine } from "../engine/engine.js";
import { ApiError, type Problem } from "../http/errors.js";
import { parseDecide } from "../api/decide.js";
import { resolveModel } from "../api/models.js";
import { parseSystemOne } from "../api/systemone.js";
import { accuracy, ece, reliabilityBins, type Judged } from "../eval/metrics.js";
import { reliabilitySvg } from "../eval/reliability.js";
import { minConfidence } from "../eval/threshold.js";
import type { Question, QuestionKind } from "../questions/question.js";
import { renderText } from "../questions/render.js";

/**
 * A calibration a key fits from its own labeled examples: per question type, a temperature (noul: a logistic
 * slope and bias) and the min_confidence that reaches the accuracy the caller asks for, both fitted on two thirds
 * of the examples; the other third, held out, is where the report compares the model's own calibration with the
 * fitted one. Stored per key; a request names it in its `calibration` field.
 */

export const MIN_EXAMPLES = 20;
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const KINDS: QuestionKind[] = ["noul", "choice", "score"];

export interface LabeledExample {
  state: string;
  question: Question;
  /** noul: 1 true, 0 false; choice: the option's index; score: the level's index. */
  label: number;
}

export interface CalibrationRequest {
  name: string;
  model: string;
  target: number;
  examples: LabeledExample[];
}

interface Metrics {
  n: number;
  accuracy: number;
  ece: number;
  /** Share answered at the threshold (the model's default before, the fitted one per type after). */
  coverage: number;
  answered_accuracy: number;
}

export interface FittedCalibration {
  name: string;
  model: string;
  /** The identity of the model files it was fitted on (ModelInfo.hash): answers with another model are refused. */
  model_hash: string;
  /** The identity of this calibration: 12 hex digits of a sha256 over what it holds. */
  hash: string;
  target_accuracy: number;
  examples: { fit: number; held_out: number };
  calibration: Calibration;
  min_confidence: Record<QuestionKind, number>;
  /** Per type: whether the fit examples reached the target at some threshold. */
  target_reached: Record<QuestionKind, boolean | null>;
  report: { before: Record<QuestionKind | "all", Metrics>; after: Record<QuestionKind | "all", Metrics> };
  created_at: string;
}

/** Problems with their location under `examples[i]` (the parsers report them under `questions.q`). */
function relocate(err: unknown, at: (string | number)[], problems: Problem[]): void {
  if (!(err instanceof ApiError)) throw err;
  for (const p of err.problems.length > 0 ? err.problems : [{ loc: [], code: err.code, params: err.params, type: "value_error" } as Problem]) {
    const rest = p.loc[0] === "questions" ? p.loc.slice(2) : p.loc;
    problems.push({ ...p, loc: [...at, ...rest] });
  }
}

/** One question in either API's shape: System One (`instructions`, `criteria`) or /v1/decide (`question`, `options`, `levels`, `yes`, `no`). */
function readQuestion(value: unknown, at: (string | number)[], problems: Problem[]): Question | null {
  const v = value as Record<string, unknown> | null;
  const decide = v !== null && typeof v === "object" && (v.type === "binary" || v.type === "scale" || "question" in v || "options" in v || "levels" in v);
  try {
    const body = { model: "svc-latest", state: "", questions: { q: value } };
    return (decide ? parseDecide(body) : parseSystemOne(body)).questions[0];
  } catch (err) {
    relocate(err, at, problems);
    return null;
  }
}

function readLabel(q: Question, answer: unknown, at: (string | number)[], problems: Problem[]): number | null {
  if (q.kind === "noul" && typeof answer === "boolean") return answer ? 1 : 0;
  if (q.kind === "choice" && typeof answer === "string") {
    const i = q.options.findIndex((o) => o.key === answer);
    if (i >= 0) return i;
  }
  if (q.kind === "score") {
    const i = typeof answer === "number" ? answer : typeof answer === "string" && /^\d+$/.test(answer) ? Number(answer) : NaN;
    if (Number.isInteger(i) && i >= 0 && i < q.options.length) return i;
  }
  const expected = q.kind === "noul" ? "true or false" : q.kind === "choice" ? `one of the option keys (${q.options.map((o) => o.key).join(", ")})` : `a level index from 0 to ${q.options.length - 1}`;
  problems.push({ loc: at, code: "calibration_answer", type: "value_error", params: { expected } });
  return null;
}

/** Reads a calibration request: {name, model?, target_accuracy?, examples: [{state, question, answer, model?}]}. */
export function parseCalibrationRequest(body: unknown): CalibrationRequest {
  const b = (body ?? {}) as Record<string, unknown>;
  const problems: Problem[] = [];
  const name = typeof b.name === "string" && NAME_PATTERN.test(b.name) ? b.name : null;
  if (name === null) problems.push({ loc: ["name"], code: "calibration_name", type: "value_error" });
  const model = typeof b.model === "string" ? b.model : "svc-latest";
  const resolved = resolveModel(model);
  if (resolved === null) problems.push({ loc: ["model"], code: "model_not_found", type: "value_error", params: { model, available: "svc-latest, svc-preview" } });
  const target = b.target_accuracy === undefined ? 0.9 : b.target_accuracy;
  if (typeof target !== "number" || !(target > 0 && target <= 1)) problems.push({ loc: ["target_accuracy"], code: "number_range", type: "number_type" });
  const raw = Array.isArray(b.examples) ? b.examples : null;
  if (raw === null) problems.push({ loc: ["examples"], code: "calibration_too_few", type: "value_error", params: { n: 0, min: MIN_EXAMPLES } });
  else if (raw.length < MIN_EXAMPLES) problems.push({ loc: ["examples"], code: "calibration_too_few", type: "value_error", params: { n: raw.length, min: MIN_EXAMPLES } });
  const examples: LabeledExample[] = [];
  const models = new Set<string>(resolved === null ? [] : [resolved]);
  (raw ?? []).forEach((e, i) => {
    const at = ["examples", i];
    const ex = (e ?? {}) as Record<string, unknown>;
    if (typeof ex.model === "string") {
      const m = resolveModel(ex.model);
      if (m !== null) models.add(m);
      else problems.push({ loc: [...at, "model"], code: "model_not_found", type: "value_error", params: { model: ex.model, available: "svc-latest, svc-preview" } });
    }
    if (ex.state === undefined || ex.state === null) {
      problems.push({ loc: [...at, "state"], code: "missing", type: "missing" });
      return;
    }
    const q = readQuestion(ex.question, [...at, "question"], problems);
    if (q === null) return;
    const label = readLabel(q, ex.answer, [...at, "answer"], problems);
    if (label !== null) examples.push({ state: renderText(ex.state), question: q, label });
  });
  if (models.size > 1) problems.push({ loc: ["examples"], code: "calibration_models_mixed", type: "value_error", params: { models: [...models].sort().join(", ") } });
  if (problems.length > 0) throw ApiError.validation(problems);
  return { name: name!, model: resolved!, target: target as number, examples };
}

interface Scored {
  kind: QuestionKind;
  raw: number[];
  keys: string[];
  label: number;
  heldOut: boolean;
}

function judgeWith(s: Scored, cal: Calibration): Judged {
  const a = answerNumbers(s.kind, s.raw, s.keys, cal);
  return { kind: s.kind, correct: a.best === s.label, top: a.probabilities[a.best], confidence: a.confidence };
}

const GRID = Array.from({ length: 121 }, (_, i) => Math.exp(Math.log(0.05) + (i / 120) * (Math.log(20) - Math.log(0.05))));

/** Negative log-likelihood of the labels under a calibration (one type). */
function nll(rows: Scored[], cal: Calibration): number {
  let sum = 0;
  for (const s of rows) sum -= Math.log(Math.max(answerNumbers(s.kind, s.raw, s.keys, cal).probabilities[s.label], 1e-12));
  return sum;
}

/**
 * How far a fit may move from the model's own calibration unless the examples insist: a Gaussian prior on the log
 * of the temperature (noul: of the slope) with this spread, and on the noul bias with BIAS_SPREAD. With a few dozen
 * examples an unpenalized slope and bias fit their noise (on 25 examples a free fit made the held-out ECE worse);
 * with hundreds the likelihood outweighs the prior.
 */
const LOG_SCALE_SPREAD = 0.5;
const BIAS_SPREAD = 1;
/** The threshold must reach the target with one right and one wrong answer added to those it lets through (see minConfidence). */
const THRESHOLD_PRIOR = 1;

function penalty(kind: QuestionKind, cal: Calibration, base: Calibration): number {
  const sq = (x: number): number => x * x;
  if (kind === "noul") return sq(Math.log(cal.noul.a / base.noul.a) / LOG_SCALE_SPREAD) / 2 + sq((cal.noul.b - base.noul.b) / BIAS_SPREAD) / 2;
  return sq(Math.log(cal[kind].temperature / base[kind].temperature) / LOG_SCALE_SPREAD) / 2;
}

/** The grid point of highest posterior (likelihood times the prior around the model's own): deterministic, no step sizes to tune. */
function fitType(kind: QuestionKind, rows: Scored[], base: Calibration): Calibration {
  let best = base;
  let bestLoss = Infinity;
  const tries: Calibration[] =
    kind === "noul"
      ? GRID.flatMap((a) => Array.from({ length: 33 }, (_, j) => ({ ...base, noul: { a: a * base.noul.a, b: base.noul.b - 4 + j / 4 } })))
      : GRID.map((t) => ({ ...base, [kind]: { temperature: t * base[kind].temperature } }));
  for (const c of tries) {
    const v = nll(rows, c) + penalty(kind, c, base);
    if (v < bestLoss) {
      bestLoss = v;
      best = c;
    }
  }
  return best;
}

function metrics(judged: Judged[], threshold: (k: QuestionKind) => number): Metrics {
  const answered = judged.filter((j) => j.confidence >= threshold(j.kind));
  return {
    n: judged.length,
    accuracy: accuracy(judged),
    ece: judged.length === 0 ? NaN : ece(judged),
    coverage: judged.length === 0 ? NaN : answered.length / judged.length,
    answered_accuracy: accuracy(answered),
  };
}

/** Held out: a third of the examples, chosen by a hash of their text (the same examples always split the same way). */
function heldOut(e: LabeledExample, i: number, n: number): boolean {
  const h = createHash("sha1").update(`${e.state}\0${JSON.stringify(e.question)}`).digest().readUInt32BE(0);
  return n < 6 ? i % 3 === 0 : h % 3 === 0;
}

/** Runs the model on every example (through `run`, which the caller bounds) and fits the calibration. */
export async function fitCalibration(
  engine: Engine,
  req: CalibrationRequest,
  run: (state: string, q: Question) => Promise<number[]>,
): Promise<{ fitted: FittedCalibration; svg: string }> {
  const scored: Scored[] = [];
  for (const [i, e] of req.examples.entries()) {
    scored.push({ kind: e.question.kind, raw: await run(e.state, e.question), keys: e.question.options.map((o) => o.key), label: e.label, heldOut: heldOut(e, i, req.examples.length) });
  }
  if (scored.every((s) => s.heldOut) || scored.every((s) => !s.heldOut)) scored.forEach((s, i) => (s.heldOut = i % 3 === 0));
  const base = engine.calibration;
  let cal: Calibration = { ...base };
  const minConf = {} as Record<QuestionKind, number>;
  const reached = {} as Record<QuestionKind, boolean | null>;
  for (const kind of KINDS) {
    const fit = scored.filter((s) => s.kind === kind && !s.heldOut);
    if (fit.length === 0) {
      minConf[kind] = base.default_min_confidence;
      reached[kind] = null;
      continue;
    }
    cal = { ...cal, [kind]: fitType(kind, fit, cal)[kind] };
    const judged = fit.map((s) => judgeWith(s, cal));
    const gate = minConfidence(judged.map((j) => j.confidence), judged.map((j) => j.correct), req.target, THRESHOLD_PRIOR);
    minConf[kind] = Math.floor(gate.threshold * 1e6) / 1e6;
    reached[kind] = gate.reached;
  }
  cal = { ...cal, default_min_confidence: Math.max(...KINDS.map((k) => minConf[k])) };
  const held = scored.filter((s) => s.heldOut);
  const before = held.map((s) => judgeWith(s, base));
  const after = held.map((s) => judgeWith(s, cal));
  const per = (judged: Judged[], threshold: (k: QuestionKind) => number) =>
    Object.fromEntries([...KINDS.map((k) => [k, metrics(judged.filter((j) => j.kind === k), threshold)]), ["all", metrics(judged, threshold)]]) as Record<QuestionKind | "all", Metrics>;
  const body = {
    name: req.name,
    model: req.model,
    model_hash: engine.info.hash,
    target_accuracy: req.target,
    examples: { fit: scored.length - held.length, held_out: held.length },
    calibration: cal,
    min_confidence: minConf,
    target_reached: reached,
    report: { before: per(before, () => base.default_min_confidence), after: per(after, (k) => minConf[k]) },
  };
  const hash = createHash("sha256").update(JSON.stringify({ ...body, report: undefined })).digest("hex").slice(0, 12);
  // The reliability diagram of the held-out examples: the model's own calibration beside the fitted one.
  const svg = reliabilitySvg(`calibration ${req.name}: ${held.length} held-out examples`, [
    { name: "model's own", bins: reliabilityBins(before), ece: ece(before) },
    { name: req.name, bins: reliabilityBins(after), ece: ece(after) },
  ]);
  return { fitted: { ...body, hash, created_at: new Date().toISOString() }, svg };
}
