import type { Calibration } from "./engine.js";
import type { QuestionKind } from "../questions/question.js";

/** The numbers of one answer, independent of the wire format that carries them. */
export interface AnswerNumbers {
  kind: QuestionKind;
  /** choice/score: probability per option/level, in the question's option order. noul: [P(false), P(true)]. */
  probabilities: number[];
  /** 1 - H(p)/ln(n); for noul computed over {true, false}. */
  confidence: number;
  /** score: expected level sum(i * p_i); otherwise null. */
  expected: number | null;
  /** choice/score: index of the most probable option (an exact tie goes to the smaller key); noul: 1 when P(true) >= 0.5 else 0. */
  best: number;
}

/** Sum in ascending order: the result does not depend on the order of the inputs (nor of the options). */
export function orderFreeSum(values: number[]): number {
  return [...values].sort((a, b) => a - b).reduce((a, b) => a + b, 0);
}

export function softmax(raw: number[], temperature: number): number[] {
  const scaled = raw.map((r) => r / temperature);
  const max = Math.max(...scaled);
  const exps = scaled.map((s) => Math.exp(s - max));
  const sum = orderFreeSum(exps);
  return exps.map((e) => e / sum);
}

export function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/** 1 - normalized entropy: 0 = uniform (no idea), 1 = all mass on one option. */
export function confidenceOf(p: number[]): number {
  if (p.length < 2) return 1;
  const h = -orderFreeSum(p.filter((q) => q > 0).map((q) => q * Math.log(q)));
  const c = 1 - h / Math.log(p.length);
  return Math.min(1, Math.max(0, c));
}

/** Index of the largest p; an exact tie goes to the smaller key, so the order of options never matters. */
function argmax(p: number[], keys: string[]): number {
  let best = 0;
  for (let i = 1; i < p.length; i++) {
    if (p[i] > p[best] || (p[i] === p[best] && keys[i] < keys[best])) best = i;
  }
  return best;
}

/** Turns a model's raw scores for one question into calibrated numbers. */
export function answerNumbers(kind: QuestionKind, raw: number[], keys: string[], cal: Calibration): AnswerNumbers {
  if (kind === "noul") {
    const t = sigmoid(cal.noul.a * raw[0] + cal.noul.b);
    const probabilities = [1 - t, t];
    return { kind, probabilities, confidence: confidenceOf(probabilities), expected: null, best: t >= 0.5 ? 1 : 0 };
  }
  const probabilities = softmax(raw, kind === "choice" ? cal.choice.temperature : cal.score.temperature);
  const expected = kind === "score" ? probabilities.reduce((s, p, i) => s + i * p, 0) : null;
  return { kind, probabilities, confidence: confidenceOf(probabilities), expected, best: argmax(probabilities, keys) };
}
