import { test } from "node:test";
import assert from "node:assert/strict";
import { ece, eceFloor, type Judged } from "../src/eval/metrics.js";
import { minConfidence } from "../src/eval/threshold.js";

const answers = (n: number, top: number, right = (i: number) => i % 2 === 0): Judged[] =>
  Array.from({ length: n }, (_, i) => ({ kind: "choice", correct: right(i), top, confidence: top }));

test("ece: confidence against accuracy in each of 10 bins, weighted by the bins' sizes", () => {
  // 10 answers at 0.7, 5 right: |0.5 - 0.7| = 0.2.
  assert.ok(Math.abs(ece(answers(10, 0.7)) - 0.2) < 1e-12);
  // Two bins: 4 answers at 0.95 all right (0.05), 4 at 0.35 none right (0.35): (4 * 0.05 + 4 * 0.35) / 8.
  const two = [...answers(4, 0.95, () => true), ...answers(4, 0.35, () => false)];
  assert.ok(Math.abs(ece(two) - 0.2) < 1e-12);
});

test("eceFloor: what a perfectly calibrated model shows with these confidences and this few answers", () => {
  // Always right at confidence 1: nothing to miss.
  assert.equal(eceFloor(answers(5, 1)), 0);
  // One answer at 0.5 is either right or wrong: |1 - 0.5| or |0 - 0.5|, so exactly 0.5.
  assert.ok(Math.abs(eceFloor(answers(1, 0.5)) - 0.5) < 1e-12);
  // One bin of n answers at p: the mean of |k/n - p| over k ~ Binomial(n, p); for n = 28, p = 0.7: 0.0701...
  let exact = 0;
  const n = 28;
  const p = 0.7;
  let choose = 1;
  for (let k = 0; k <= n; k++) {
    exact += choose * p ** k * (1 - p) ** (n - k) * Math.abs(k / n - p);
    choose = (choose * (n - k)) / (k + 1);
  }
  const floor28 = eceFloor(answers(n, p), 20000);
  assert.ok(Math.abs(floor28 - exact) < 0.003, `${floor28} vs ${exact}`);
  // It shrinks with the number of answers, and the same call gives the same number.
  assert.ok(eceFloor(answers(400, p)) < floor28 / 3);
  assert.equal(eceFloor(answers(28, 0.6)), eceFloor(answers(28, 0.6)));
  assert.ok(Number.isNaN(eceFloor([])));
});

test("minConfidence: the lowest threshold whose answered share is right often enough; with a prior, a few lucky answers are not enough", () => {
  // confidences 0.1 .. 2.0; the four least confident are wrong, one more wrong at 0.9
  const conf = Array.from({ length: 20 }, (_, i) => (i + 1) / 10);
  const correct = conf.map((c) => c > 0.4 && c !== 0.9);
  // from 0.5 on: 15 of 16 right (0.9375); the threshold halfway between 0.4 (abstained) and 0.5 (answered)
  assert.deepEqual(minConfidence(conf, correct, 0.9), { threshold: 0.45, accuracy: 15 / 16, answered: 16, reached: true });
  // with one right and one wrong added: 16/18 = 0.889 from 0.5 on is short of 0.9; from 1.0 on, 11/11 gives 12/13 = 0.923
  assert.deepEqual(minConfidence(conf, correct, 0.9, 1), { threshold: 0.95, accuracy: 1, answered: 11, reached: true });
  // every question answered: 0
  assert.equal(minConfidence(conf, conf.map(() => true), 0.9).threshold, 0);
  // a target no threshold reaches: the best accuracy is taken and said to be short
  assert.equal(minConfidence(conf, correct, 1.01).reached, false);
});
