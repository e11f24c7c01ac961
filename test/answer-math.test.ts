import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { answerNumbers, confidenceOf, sigmoid, softmax } from "../src/engine/answer.js";
import type { Calibration } from "../src/engine/engine.js";

// Expected values are worked out by hand (e^-1 = 0.367879441, e^-2 = 0.135335283, ...), not by the code under test.
function close(actual: number, expected: number, what = "value", tol = 1e-9): void {
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} != ${expected}`);
}
function closeAll(actual: number[], expected: number[], what = "values", tol = 1e-9): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  actual.forEach((a, i) => close(a, expected[i], `${what}[${i}]`, tol));
}

const cal = (t: number, a = 1, b = 0): Calibration => ({
  choice: { temperature: t },
  score: { temperature: t },
  noul: { a, b },
  default_min_confidence: 0.2,
});

describe("softmax with temperature", () => {
  test("softmax([1,2,3]) at T=1 is [e^-2, e^-1, 1] / 1.503214724", () => {
    closeAll(softmax([1, 2, 3], 1), [0.090030573, 0.244728471, 0.665240956], "p", 1e-9);
  });

  test("T=0.5 sharpens and T=2 flattens", () => {
    // T=0.5: raw/T = [2,4,6] -> [e^-4, e^-2, 1] / 1.153650 ; T=2: [0.5,1,1.5] -> [e^-1, e^-0.5, 1] / 1.974410
    closeAll(softmax([1, 2, 3], 0.5), [0.015876240, 0.117310428, 0.866813332], "T=0.5", 1e-9);
    closeAll(softmax([1, 2, 3], 2), [0.186323723, 0.307195886, 0.506480391], "T=2", 1e-9);
  });

  test("is shift invariant and does not overflow on large logits", () => {
    // [1000, 1001] is [0, 1] shifted: 1/(1+e), e/(1+e)
    closeAll(softmax([1000, 1001], 1), [0.268941421, 0.731058579], "large", 1e-9);
    closeAll(softmax([-1000, -999], 1), [0.268941421, 0.731058579], "very negative", 1e-9);
    // Shifted by the largest, e^800 never has to be computed.
    assert.deepEqual(softmax([0, 800], 1), [0, 1]);
  });
});

describe("noul calibration: P(true) = sigmoid(a * raw + b)", () => {
  test("a=2, b=-1 maps raw 0.5 to exactly 0.5 and a=2, b=0.5 maps raw 1.5 to 1/(1+e^-3.5)", () => {
    const half = answerNumbers("noul", [0.5], [], cal(1, 2, -1));
    closeAll(half.probabilities, [0.5, 0.5], "P");
    assert.equal(half.best, 1, "a probability of exactly 0.5 counts as true");
    close(half.confidence, 0, "confidence at 0.5");
    const sure = answerNumbers("noul", [1.5], [], cal(1, 2, 0.5));
    close(sure.probabilities[1], 0.970687769, "P(true)");
    close(sure.probabilities[0], 0.029312231, "P(false)");
    assert.equal(sure.best, 1);
    assert.equal(sure.expected, null);
  });

  test("sigmoid is symmetric and stable far from 0", () => {
    close(sigmoid(-3), 0.047425873, "sigmoid(-3)");
    close(sigmoid(3) + sigmoid(-3), 1, "symmetry");
    assert.equal(sigmoid(-1000), 0);
    assert.equal(sigmoid(1000), 1);
    assert.equal(answerNumbers("noul", [-3], [], cal(1)).best, 0);
  });
});

describe("confidence = 1 - H(p) / ln(n)", () => {
  test("uniform is 0 and one-hot is 1, for 2 options and for 200", () => {
    close(confidenceOf([0.5, 0.5]), 0, "uniform 2");
    close(confidenceOf([1, 0]), 1, "one-hot 2");
    close(confidenceOf(new Array(200).fill(1 / 200)), 0, "uniform 200", 1e-12);
    close(confidenceOf([1, ...new Array(199).fill(0)]), 1, "one-hot 200");
    // Rounding puts 1 - H/ln 5 of the uniform 5 at -2.2e-16: clamped to exactly 0. One option: certain.
    assert.equal(confidenceOf(new Array(5).fill(0.2)), 0);
    assert.equal(confidenceOf([1]), 1);
  });

  test("[0.9, 0.1]: H = 0.325082973 nats, / ln 2 = 0.468995594", () => {
    close(confidenceOf([0.9, 0.1]), 0.531004406, "confidence");
  });

  test("half the mass on one of 200 options: H = ln 2 / 2 + (ln 398) / 2", () => {
    const p = [0.5, ...new Array(199).fill(0.5 / 199)];
    // H = 0.5 ln 2 + 0.5 ln(398) = 0.5 ln 796 = 3.339..., / ln 200 = 0.630351
    close(confidenceOf(p), 0.369649011, "confidence");
  });

  test("answerNumbers reports the confidence of its probabilities", () => {
    const a = answerNumbers("choice", [1, 2, 3], ["a", "b", "c"], cal(1));
    close(a.confidence, 0.242320889, "confidence of softmax([1,2,3])");
  });
});

describe("score expectation, ties and order", () => {
  test("raw [0, 0, ln 2] gives p = [1/4, 1/4, 1/2] and score 0*1/4 + 1*1/4 + 2*1/2 = 1.25", () => {
    const s = answerNumbers("score", [0, 0, Math.log(2)], ["0", "1", "2"], cal(1));
    closeAll(s.probabilities, [0.25, 0.25, 0.5], "p", 1e-12);
    close(s.expected!, 1.25, "score", 1e-12);
    assert.equal(s.best, 2);
  });

  test("softmax([1,2,3]) as a score expects level 0.244728471 + 2 * 0.665240956 = 1.575210383", () => {
    close(answerNumbers("score", [1, 2, 3], ["0", "1", "2"], cal(1)).expected!, 1.575210383, "score");
  });

  test("a choice uses the choice temperature and has no expectation; a score uses its own temperature", () => {
    const both: Calibration = { choice: { temperature: 1 }, score: { temperature: 0.5 }, noul: { a: 1, b: 0 }, default_min_confidence: 0.2 };
    const c = answerNumbers("choice", [1, 2, 3], ["a", "b", "c"], both);
    closeAll(c.probabilities, [0.090030573, 0.244728471, 0.665240956], "choice at T=1");
    assert.equal(c.expected, null);
    closeAll(answerNumbers("score", [1, 2, 3], ["0", "1", "2"], both).probabilities, [0.01587624, 0.117310428, 0.866813332], "score at T=0.5");
  });

  test("an exact tie goes to the smaller key, wherever it stands", () => {
    assert.equal(answerNumbers("choice", [1, 1], ["b", "a"], cal(1)).best, 1);
    assert.equal(answerNumbers("choice", [1, 1], ["a", "b"], cal(1)).best, 0);
    assert.equal(answerNumbers("choice", [0, 5, 5, 5], ["z", "m", "c", "q"], cal(1)).best, 2);
  });

  test("probabilities and confidence per key are exactly equal (===) for 10,000 random 4-option inputs and their reversal", () => {
    const keys = ["a", "b", "c", "d"];
    const raw = fc.array(fc.double({ min: -8, max: 8, noNaN: true }), { minLength: 4, maxLength: 4 });
    fc.assert(
      fc.property(raw, fc.double({ min: 0.05, max: 3, noNaN: true }), (r, t) => {
        const a = answerNumbers("choice", r, keys, cal(t));
        const b = answerNumbers("choice", [...r].reverse(), [...keys].reverse(), cal(t));
        return a.probabilities.every((p, i) => p === b.probabilities[3 - i]) && a.confidence === b.confidence && keys[a.best] === keys[3 - b.best];
      }),
      { numRuns: 10_000, seed: 15 },
    );
  });
});
