import { ApiError, type Problem } from "../http/errors.js";
import type { AnswerNumbers } from "../engine/answer.js";
import {
  isPlainObject,
  LIMITS,
  readChoiceOptions,
  readQuestionHead,
  readModelName,
  readQuestionMap,
  readScoreLevels,
  readText,
  readYesNo,
  type Loc,
} from "../questions/fields.js";
import type { DecisionRequest, Question } from "../questions/question.js";
import { byOptionKey } from "./systemone.js";

/** Native API, POST /v1/decide: binary / choice / scale questions with built-in abstention. */
export interface DecideRequest extends DecisionRequest {
  /** Request-wide threshold, or null to use the model's calibrated default. */
  minConfidence: number | null;
  /** Per-question thresholds by question key (null when the question sets none). */
  questionMinConfidence: Map<string, number | null>;
}

/** What every answer carries besides its own numbers. */
interface DecideCommon {
  confidence: number;
  abstained: boolean;
  min_confidence: number;
  /** True when this question read only the head of the state (the rest did not fit its pairs' tokens). */
  state_truncated: boolean;
}

export type DecideAnswer =
  | ({ type: "binary"; answer: boolean | null; probability: number } & DecideCommon)
  | ({ type: "choice"; answer: string | null; probabilities: Record<string, number> } & DecideCommon)
  | ({ type: "scale"; answer: number | null; level: number | null; probabilities: Record<string, number> } & DecideCommon);

export interface DecideResponse {
  id: string;
  model: string;
  /** The identity of the model files that answered (also in the x-model-hash header). */
  model_hash: string;
  /** The calibration that produced the numbers: `default`, or `name@hash` of one the key fitted (also in x-calibration). */
  calibration: string;
  answers: Record<string, DecideAnswer>;
  usage: { input_tokens: number; output_tokens: 0 };
}

const KIND_OF = { binary: "noul", choice: "choice", scale: "score" } as const;
type DecideType = keyof typeof KIND_OF;
const DECIDE_TYPES = Object.keys(KIND_OF) as DecideType[];

function readThreshold(value: unknown, loc: Loc, problems: Problem[]): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 1) {
    problems.push({ loc, code: "number_range", type: "number_type" });
    return null;
  }
  return value;
}

function readQuestion(key: string, value: unknown, loc: Loc, problems: Problem[]): { q: Question; min: number | null } | null {
  const head = readQuestionHead(value, loc, problems, DECIDE_TYPES);
  if (!head) return null;
  const { fields, type } = head;
  const kind = KIND_OF[type];
  const text = readText(fields.question, [...loc, "question"], problems, {
    nullable: false,
    maxChars: LIMITS.maxInstructionChars,
  });
  const q: Question = { key, kind, text, options: [], yes: null, no: null };
  if (kind === "choice") q.options = readChoiceOptions(fields.options, [...loc, "options"], problems);
  else if (kind === "score") q.options = readScoreLevels(fields.levels, [...loc, "levels"], problems);
  else {
    const sides = readYesNo({ yes: fields.yes, no: fields.no }, loc, problems, { yes: "yes", no: "no" });
    q.yes = sides.yes;
    q.no = sides.no;
  }
  return { q, min: readThreshold(fields.min_confidence, [...loc, "min_confidence"], problems) };
}

/** Parses and validates a /v1/decide body. Throws ApiError(422) listing every problem found. */
export function parseDecide(body: unknown): DecideRequest {
  if (!isPlainObject(body)) throw ApiError.validation([{ loc: [], code: "dict_type", type: "dict_type" }]);
  const problems: Problem[] = [];
  const model = readModelName(body.model, ["model"], problems);
  const state = readText(body.state, ["state"], problems, { nullable: false }) ?? "";
  const minConfidence = readThreshold(body.min_confidence, ["min_confidence"], problems);
  const questions: Question[] = [];
  const questionMinConfidence = new Map<string, number | null>();
  for (const [key, value] of readQuestionMap(body.questions, ["questions"], problems)) {
    const r = readQuestion(key, value, ["questions", key], problems);
    if (!r) continue;
    questions.push(r.q);
    questionMinConfidence.set(key, r.min);
  }
  if (problems.length > 0) throw ApiError.validation(problems);
  return { model, state, questions, minConfidence, questionMinConfidence };
}

/** Serializes one answer with abstention: under the threshold, `answer` is null and `abstained` true. */
export function decideAnswer(q: Question, a: AnswerNumbers, threshold: number, stateCut: boolean): DecideAnswer {
  const abstained = a.confidence < threshold;
  const common = { confidence: a.confidence, abstained, min_confidence: threshold, state_truncated: stateCut };
  if (q.kind === "noul") {
    return { type: "binary", answer: abstained ? null : a.best === 1, probability: a.probabilities[1], ...common };
  }
  const probabilities = byOptionKey(q, (_, i) => a.probabilities[i]);
  if (q.kind === "choice") {
    return { type: "choice", answer: abstained ? null : q.options[a.best].key, probabilities, ...common };
  }
  return {
    type: "scale",
    answer: abstained ? null : (a.expected ?? 0),
    level: abstained ? null : a.best,
    probabilities,
    ...common,
  };
}
