import { test } from "node:test";
import assert from "node:assert/strict";
import { ece, eceFloor, type Judged } from "../src/eval/metrics.js";

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
