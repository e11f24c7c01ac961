/**
 * The fits shared by the calibration scripts (fit-calibration.ts for the bi-encoder routes,
 * fit-cross-calibration.ts for the cross-encoder, fit-threshold.ts for the served threshold), with
 * the answer math of src/engine/answer.ts.
 */
import { sigmoid, softmax } from "../src/engine/answer.js";

/**
 * What the default threshold promises: of the questions it lets through, at least this share right
 * (on the fit split). 0.7 rather than a stricter figure so that /v1/decide answers a useful share
 * with today's small model: at 0.9 it answered about 5% of the fit split, at 0.7 about 30%.
 */
export const TARGET_ACCURACY = 0.7;
const MIN_ANSWERED_SHARE = 0.1;
const MIN_ANSWERED = 5;

/**
 * Logistic regression p = sigmoid(a x + b) by Newton's method, with a small ridge on a for separable
 * data. Classes are weighted to equal total weight: the share of true labels differs a lot between
 * small sets (and between callers), and b should reflect the evidence in x, not that share.
 */
export function logistic(xs: number[], ys: number[], ridge = 1e-3): { a: number; b: number } {
  const positives = ys.filter((y) => y === 1).length;
  const negatives = ys.length - positives;
  if (positives === 0 || negatives === 0) return { a: 0, b: 0 };
  const weight = (y: number): number => (y === 1 ? ys.length / (2 * positives) : ys.length / (2 * negatives));
  let a = 0;
  let b = 0;
  for (let iter = 0; iter < 100; iter++) {
    let ga = ridge * a;
    let gb = 0;
    let haa = ridge;
    let hab = 0;
    let hbb = 1e-9;
    for (let i = 0; i < xs.length; i++) {
      const p = sigmoid(a * xs[i] + b);
      const c = weight(ys[i]);
      const r = c * (p - ys[i]);
      const w = c * p * (1 - p);
      ga += r * xs[i];
      gb += r;
      haa += w * xs[i] * xs[i];
      hab += w * xs[i];
      hbb += w;
    }
    const det = haa * hbb - hab * hab;
    if (det <= 0) break;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    a -= da;
    b -= db;
    if (Math.abs(da) + Math.abs(db) < 1e-10) break;
  }
  return { a, b };
}

/** Temperature minimizing the mean log loss, by golden-section search on log T. */
export function fitTemperature(raws: number[][], labels: number[]): number {
  const loss = (logT: number): number => {
    const t = Math.exp(logT);
    let sum = 0;
    raws.forEach((raw, i) => (sum -= Math.log(Math.max(softmax(raw, t)[labels[i]], 1e-300))));
    return sum / raws.length;
  };
  let lo = Math.log(1e-4);
  let hi = Math.log(10);
  const g = (Math.sqrt(5) - 1) / 2;
  for (let iter = 0; iter < 200; iter++) {
    const m1 = hi - g * (hi - lo);
    const m2 = lo + g * (hi - lo);
    if (loss(m1) < loss(m2)) hi = m2;
    else lo = m1;
  }
  return Math.exp((lo + hi) / 2);
}

export const argmax = (p: number[]): number => p.reduce((best, v, i) => (v > p[best] ? i : best), 0);

/**
 * The lowest threshold with at least TARGET_ACCURACY right among the questions still answered
 * (confidence >= threshold), among thresholds that answer at least MIN_ANSWERED_SHARE of them;
 * when none reaches the target, the one with the best accuracy (reached: false).
 */
export function minConfidence(conf: number[], correct: boolean[]): { threshold: number; accuracy: number; answered: number; reached: boolean } {
  const order = conf.map((c, i) => i).sort((i, j) => conf[i] - conf[j]);
  const minAnswered = Math.max(MIN_ANSWERED, Math.ceil(MIN_ANSWERED_SHARE * conf.length));
  let best = { threshold: 0, accuracy: -1, answered: 0, reached: false };
  for (let k = 0; k < order.length; k++) {
    // Threshold at the k-th smallest confidence: items k.. are answered.
    if (k > 0 && conf[order[k]] === conf[order[k - 1]]) continue;
    const answered = order.length - k;
    if (answered < minAnswered) break;
    let ok = 0;
    for (let m = k; m < order.length; m++) if (correct[order[m]]) ok++;
    const accuracy = ok / answered;
    const threshold = k === 0 ? 0 : conf[order[k]];
    if (accuracy >= TARGET_ACCURACY) return { threshold, accuracy, answered, reached: true };
    if (accuracy > best.accuracy) best = { threshold, accuracy, answered, reached: false };
  }
  return best;
}

