import { ApiError, type Problem } from "../http/errors.js";
import type { AnswerNumbers } from "../engine/answer.js";
import type { DecisionRequest, Question } from "../questions/question.js";
import {
  LIMITS,
  isPlainObject,
  readChoiceOptions,
  readQuestionHead,
  readModelName,
  readQuestionMap,
  readScoreLevels,
  readText,
  readYesNo,
  type Loc,
} from "../questions/fields.js";

/** Wire shapes of POST /v1/systemone (TypeSafe System One compatible). */
export type SystemOneAnswer =
  | { type: "noul"; noul: number }
  | { type: "choice"; choice: string; probabilities: Record<string, number>; confidence: number }
  | {
      type: "score";
      score: number;
      /** Each level as the request sent it: a string, or an object or array echoed unchanged. */
      legend: Record<string, unknown>;
      probabilities: Record<string, number>;
      confidence: number;
    };

export interface SystemOneResponse {
  model: string;
  answers: Record<string, SystemOneAnswer>;
  usage: { input_tokens: number; output_tokens: 0 };
}

const TYPES = ["noul", "choice", "score"] as const;

function readQuestion(key: string, value: unknown, loc: Loc, problems: Problem[]): Question | null {
  const head = readQuestionHead(value, loc, problems, TYPES);
  if (!head) return null;
  const { fields, type: kind } = head;
  const text = readText(fields.instructions, [...loc, "instructions"], problems, {
    nullable: true,
    maxChars: LIMITS.maxInstructionChars,
  });
  const cLoc = [...loc, "criteria"];
  const q: Question = { key, kind, text, options: [], yes: null, no: null };
  if (kind === "choice") q.options = readChoiceOptions(fields.criteria, cLoc, problems);
  else if (kind === "score") q.options = readScoreLevels(fields.criteria, cLoc, problems);
  else {
    const sides = readYesNo(fields.criteria, cLoc, problems, { yes: "true", no: "false" });
    q.yes = sides.yes;
    q.no = sides.no;
    if (text === null && sides.yes === null && sides.no === null && fields.instructions == null) {
      problems.push({ loc, code: "noul_nothing", type: "value_error" });
    }
  }
  return q;
}

/** Parses and validates a /v1/systemone body. Throws ApiError(422) listing every problem found. */
export function parseSystemOne(body: unknown): DecisionRequest {
  const problems: Problem[] = [];
  if (!isPlainObject(body)) {
    throw ApiError.validation([{ loc: [], code: "dict_type", type: "dict_type" }]);
  }
  const model = readModelName(body.model, ["model"], problems);
  const state = readText(body.state, ["state"], problems, { nullable: false }) ?? "";
  const questions: Question[] = [];
  for (const [key, value] of readQuestionMap(body.questions, ["questions"], problems)) {
    const q = readQuestion(key, value, ["questions", key], problems);
    if (q) questions.push(q);
  }
  if (problems.length > 0) throw ApiError.validation(problems);
  return { model, state, questions };
}

/** A map keyed by option key. Built with fromEntries so that any key, "__proto__" included, is an own property. */
export function byOptionKey<T>(q: Question, value: (o: Question["options"][number], i: number) => T): Record<string, T> {
  return Object.fromEntries(q.options.map((o, i) => [o.key, value(o, i)]));
}

/** Serializes answer numbers into the System One wire shape. */
export function systemOneAnswer(q: Question, a: AnswerNumbers): SystemOneAnswer {
  if (q.kind === "noul") return { type: "noul", noul: a.probabilities[1] };
  const probabilities = byOptionKey(q, (_, i) => a.probabilities[i]);
  if (q.kind === "choice") {
    return { type: "choice", choice: q.options[a.best].key, probabilities, confidence: a.confidence };
  }
  const legend = byOptionKey(q, (o) => o.sent);
  return { type: "score", score: a.expected ?? 0, legend, probabilities, confidence: a.confidence };
}
