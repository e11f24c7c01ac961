/**
 * Abstention thresholds: the built-in model's default (scripts/fit-threshold.ts) and a key's own per type
 * (src/calibration/fit.ts, for the accuracy the caller asks for).
 */

/**
 * What the built-in model's default threshold promises: of the questions it lets through, at least this
 * share right (on eval/dev's fit split).
 */
export const TARGET_ACCURACY = 0.7;
const MIN_ANSWERED_SHARE = 0.1;
const MIN_ANSWERED = 5;

/**
 * The lowest threshold with at least `target` right among the questions still answered
 * (confidence >= threshold), among thresholds that answer at least MIN_ANSWERED_SHARE of them;
 * when none reaches the target, the one with the best accuracy (reached: false).
 * The threshold lies halfway between the confidence of the least confident question answered and the one
 * below it, not on the former: a confidence can move in its last digits from one CPU to another (the float
 * steps around the integer products), and a threshold on a question's own confidence would then answer it
 * on some machines and not on others.
 * `prior`: the accuracy that must reach the target is (right + prior) / (answered + 2 prior), the posterior
 * mean under a Beta(prior, prior) prior. With prior 1, 9 of 10 right counts as 0.833, not 0.9: the lowest
 * threshold that just reaches the target on a few dozen examples otherwise falls short of it on new ones
 * (it is chosen where the examples happen to be luckiest).
 */
export function minConfidence(
  conf: number[],
  correct: boolean[],
  target = TARGET_ACCURACY,
  prior = 0,
): { threshold: number; accuracy: number; answered: number; reached: boolean } {
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
    const judged = (ok + prior) / (answered + 2 * prior);
    const threshold = k === 0 ? 0 : (conf[order[k - 1]] + conf[order[k]]) / 2;
    if (judged >= target) return { threshold, accuracy, answered, reached: true };
    if (accuracy > best.accuracy) best = { threshold, accuracy, answered, reached: false };
  }
  return best;
}

