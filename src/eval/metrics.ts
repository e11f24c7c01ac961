import { answerNumbers, type AnswerNumbers } from "../engine/answer.js";
import type { Calibration, Engine, RawScores } from "../engine/engine.js";
import type { QuestionKind } from "../questions/question.js";
import { renderText } from "../questions/render.js";
import { labelIndex, toQuestion, type DevItem } from "./dataset.js";
import { splitOf, type Split } from "./split.js";

/** One labeled item after the model answered it. */
export interface Scored {
  item: DevItem;
  split: Split;
  kind: QuestionKind;
  label: number;
  raw: number[];
  tokens: number;
  ms: number;
}

export interface Judged {
  kind: QuestionKind;
  correct: boolean;
  /** Probability the model gave to its own answer (for ECE). */
  top: number;
  confidence: number;
}

/** Runs the engine on every item, a few at a time (as concurrent requests would). */
export async function scoreItems(engine: Engine, items: DevItem[], concurrency = 4): Promise<Scored[]> {
  const out: Scored[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      const item = items[i];
      const q = toQuestion(item);
      const t0 = performance.now();
      const plan = engine.plan(renderText(item.state), [q]);
      const raw: RawScores = await engine.run(plan);
      out[i] = {
        item,
        split: splitOf(item.group),
        kind: item.type,
        label: labelIndex(item, q),
        raw: raw[0],
        tokens: plan.inputTokens,
        ms: performance.now() - t0,
      };
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}

export function judge(s: Scored, cal: Calibration): Judged & { numbers: AnswerNumbers } {
  const q = toQuestion(s.item);
  const numbers = answerNumbers(s.kind, s.raw, q.options.map((o) => o.key), cal);
  return {
    kind: s.kind,
    correct: numbers.best === s.label,
    top: numbers.probabilities[numbers.best],
    confidence: numbers.confidence,
    numbers,
  };
}

/** One confidence bin: how many answers fell in it, their mean top probability and their accuracy. */
export interface Bin {
  lo: number;
  hi: number;
  n: number;
  confidence: number;
  accuracy: number;
}

/** Equal-width bins of the probability the model gave its own answer; empty bins are left out. */
export function reliabilityBins(judged: Judged[], bins = 10): Bin[] {
  const sums = Array.from({ length: bins }, () => ({ n: 0, conf: 0, acc: 0 }));
  for (const j of judged) {
    const b = Math.min(bins - 1, Math.floor(j.top * bins));
    sums[b].n++;
    sums[b].conf += j.top;
    sums[b].acc += j.correct ? 1 : 0;
  }
  return sums.flatMap((s, i) => (s.n === 0 ? [] : [{ lo: i / bins, hi: (i + 1) / bins, n: s.n, confidence: s.conf / s.n, accuracy: s.acc / s.n }]));
}

/** Expected calibration error of the top-label probability, 10 equal-width bins. */
export function ece(judged: Judged[], bins = 10): number {
  return reliabilityBins(judged, bins).reduce((e, b) => e + (b.n / judged.length) * Math.abs(b.accuracy - b.confidence), 0);
}

/**
 * The ECE that a perfectly calibrated model would show with these confidences and this few answers:
 * the mean ECE over `draws` seeded draws in which each answer is right with probability equal to its
 * confidence. ECE is biased upward on small sets (about 0.17 at 28 answers, 0.10 at 80 with eval/dev's
 * confidences), so a measured ECE is read against this floor.
 */
export function eceFloor(judged: Judged[], draws = 2000, seed = 1): number {
  if (judged.length === 0) return NaN;
  let state = seed >>> 0;
  const uniform = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  let sum = 0;
  for (let d = 0; d < draws; d++) sum += ece(judged.map((j) => ({ ...j, correct: uniform() < j.top })));
  return sum / draws;
}

export function accuracy(judged: Judged[]): number {
  return judged.length === 0 ? NaN : judged.filter((j) => j.correct).length / judged.length;
}

/** Share answered, accuracy on the answered ones and on the abstained ones, for a confidence threshold. */
export function abstention(judged: Judged[], threshold: number): { coverage: number; answered_accuracy: number; abstained_accuracy: number; n: number } {
  const answered = judged.filter((j) => j.confidence >= threshold);
  const abstained = judged.filter((j) => j.confidence < threshold);
  return {
    coverage: judged.length === 0 ? NaN : answered.length / judged.length,
    answered_accuracy: accuracy(answered),
    abstained_accuracy: accuracy(abstained),
    n: judged.length,
  };
}
