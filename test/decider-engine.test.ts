import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { CancelledError } from "../src/engine/engine.js";
import { DeciderEngine, MAX_PAIR_TOKENS, ordinal } from "../src/engine/decider/decider-engine.js";
import { questionTexts } from "../src/engine/decider/texts.js";
import { BATCH_TOKENS, RUN_COST_SLOTS, encoderRuns, shareRuns } from "../src/engine/decider/encoder-runs.js";
import { parseSystemOne } from "../src/api/systemone.js";
import { post, startService, type Service } from "./helpers/service.js";

// The built-in model (models/builtin) over real HTTP and directly: option order, limits, billing, cancellation.

let svc: Service;
let engine: DeciderEngine;
before(async () => {
  svc = await startService();
  engine = new DeciderEngine(undefined, { threads: 1 });
  await engine.load();
});
after(async () => {
  await svc.stop();
  await engine.close();
});

const state = "Bonjour, j'ai été débité deux fois pour mon abonnement ce mois-ci. Merci de me rembourser le second paiement.";

function shuffled<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

test("option order never changes a number: choice options and their probabilities are identical under shuffles", async () => {
  const options: [string, string | null][] = [
    ["billing", "payments, charges, refunds"],
    ["technical", "bugs and errors"],
    ["account", "login, password, profile"],
    ["shipping", null],
    ["cancellation", "ending a subscription"],
    ["other", "none of the above"],
  ];
  const answers = [];
  for (const seed of [1, 2, 3, 4]) {
    const criteria = Object.fromEntries(shuffled(options, seed));
    const r = await post(svc, "/v1/systemone", { model: "svc-latest", state, questions: { topic: { type: "choice", instructions: "What is this ticket about?", criteria } } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const a = (r.body as { answers: { topic: { choice: string; probabilities: Record<string, number>; confidence: number } } }).answers.topic;
    answers.push({ choice: a.choice, confidence: a.confidence, probabilities: Object.fromEntries(Object.entries(a.probabilities).sort()) });
  }
  for (const a of answers.slice(1)) assert.deepEqual(a, answers[0]);
});

test("option order never changes a number: a scale's levels keep their probabilities when other questions and option sets move", async () => {
  const q = (order: number[]) => ({
    mood: { type: "score", instructions: "How upset is the customer?", criteria: ["calm", "annoyed", "furious"] },
    team: { type: "choice", instructions: "Which team?", criteria: Object.fromEntries(order.map((i) => [[`finance`, `support`, `sales`][i], null])) },
  });
  const a = await post(svc, "/v1/systemone", { model: "svc-latest", state, questions: q([0, 1, 2]) });
  const b = await post(svc, "/v1/systemone", { model: "svc-latest", state, questions: q([2, 0, 1]) });
  assert.equal(a.status, 200);
  const A = a.body as { answers: Record<string, { probabilities: Record<string, number>; score?: number }> };
  const B = b.body as typeof A;
  assert.deepEqual(A.answers.mood, B.answers.mood);
  for (const k of ["finance", "support", "sales"]) assert.equal(A.answers.team.probabilities[k], B.answers.team.probabilities[k]);
});

test("an empty state and a choice of 255 options are answered", async () => {
  const criteria = Object.fromEntries(Array.from({ length: 255 }, (_, i) => [`intent_${i}`, i % 3 === 0 ? null : `request kind number ${i}`]));
  const r = await post(svc, "/v1/systemone", {
    model: "svc-latest",
    state: "",
    questions: { big: { type: "choice", instructions: "Which intent?", criteria }, yes: { type: "noul", instructions: "Is anything asked?" } },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const a = (r.body as { answers: { big: { probabilities: Record<string, number> }; yes: { noul: number } } }).answers;
  const p = Object.values(a.big.probabilities);
  assert.equal(p.length, 255);
  assert.ok(Math.abs(p.reduce((s, x) => s + x, 0) - 1) < 1e-6);
  assert.ok(a.yes.noul >= 0 && a.yes.noul <= 1);
});

test("billing: every pair is state + question + option tokens + 4, at most 256, the state cut at its end and flagged", () => {
  const long = "The shipment was late again. ".repeat(80);
  const req = parseSystemOne({
    model: "svc-latest",
    state: long,
    questions: {
      c: { type: "choice", instructions: "Why is the customer writing?", criteria: { delay: "a late delivery", damage: null } },
      n: { type: "noul", instructions: "Is the customer angry?", criteria: { true: "clearly upset", false: "calm" } },
      b: { type: "noul", instructions: "Is it about a delivery?" },
    },
  });
  const plan = engine.plan(req.state, req.questions);
  const stateTokens = engine.tokenize(long).length;
  assert.ok(stateTokens > MAX_PAIR_TOKENS);
  let total = 0;
  plan.questions.forEach((qp, i) => {
    const t = questionTexts(req.questions[i]);
    const q = engine.tokenize(t.question).length;
    const segs = t.segments.map((s) => engine.tokenize(s).length);
    assert.equal(qp.stateCut, true);
    if (qp.question.kind === "choice") {
      const room = MAX_PAIR_TOKENS - 4 - q - Math.max(...segs);
      assert.deepEqual(qp.pairTokens, segs.map((s) => 4 + room + q + s));
    } else {
      const sides = qp.question.yes !== null ? segs[0] + segs[1] : 0;
      assert.deepEqual(qp.pairTokens, [MAX_PAIR_TOKENS]);
      assert.equal(4 + (MAX_PAIR_TOKENS - 4 - q - sides) + q + sides, MAX_PAIR_TOKENS);
    }
    for (const n of qp.pairTokens) assert.ok(n <= MAX_PAIR_TOKENS);
    total += qp.pairTokens.reduce((s, n) => s + n, 0);
  });
  assert.equal(plan.inputTokens, total);

  const short = parseSystemOne({ model: "svc-latest", state: "Hola", questions: { n: { type: "noul", instructions: "¿Saluda?" } } });
  const p2 = engine.plan(short.state, short.questions);
  assert.equal(p2.questions[0].stateCut, false);
  assert.equal(p2.inputTokens, 4 + engine.tokenize("Hola").length + engine.tokenize("¿Saluda?").length);
});

test("a run whose signal aborts rejects with CancelledError and the engine keeps answering", async () => {
  const criteria = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, `a long description of option ${i} for cancelling`]));
  const req = parseSystemOne({ model: "svc-latest", state: "cancel me", questions: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`q${i}`, { type: "choice", instructions: `question ${i}`, criteria }])) });
  const ac = new AbortController();
  const run = engine.run(engine.plan(req.state, req.questions), { signal: ac.signal, lane: "a" });
  setTimeout(() => ac.abort(), 20);
  await assert.rejects(run, CancelledError);
  const ok = parseSystemOne({ model: "svc-latest", state: "still here", questions: { n: { type: "noul", instructions: "Is it here?" } } });
  const raw = await engine.run(engine.plan(ok.state, ok.questions), { lane: "b" });
  assert.equal(raw.length, 1);
  assert.ok(Number.isFinite(raw[0][0]));
});

test("the ordinal reading: an extreme position lands on the end level, probabilities sum to 1 and are unimodal", () => {
  const lp = ordinal([8, 0, 0, 0, 0], 0.3);
  const p = lp.map(Math.exp);
  assert.ok(Math.abs(p.reduce((s, x) => s + x, 0) - 1) < 1e-5);
  assert.ok(p[0] > 0.8, String(p));
  const mid = ordinal([0, 0, 8, 0, 0], 0.3).map(Math.exp);
  assert.equal(mid.indexOf(Math.max(...mid)), 2);
  for (let i = 0; i < 2; i++) assert.ok(mid[i] <= mid[i + 1] && mid[4 - i] <= mid[3 - i]);
});

test("the ordinal reading with a variance term: a peaked softmax on an inner level reads as sure, a flat one as unsure", () => {
  const scores = [0, 0, 8, 0, 0];
  assert.deepEqual(ordinal(scores, 0.6, 0), ordinal(scores, 0.6));
  const fixed = ordinal(scores, 0.6).map(Math.exp);
  // a fixed spread caps an inner level: 2 * sigmoid(0.5 / 0.6) - 1
  assert.ok(Math.abs(fixed[2] - (2 / (1 + Math.exp(-0.5 / 0.6)) - 1)) < 1e-4, String(fixed));
  const sure = ordinal(scores, 0.3, 0.5).map(Math.exp);
  assert.ok(sure[2] > 0.67 && sure[2] < 0.69, String(sure));
  const flat = ordinal([0, 0, 0, 0, 0], 0.3, 0.5).map(Math.exp);
  // z = 2, variance 2: width sqrt(0.09 + 1)
  assert.ok(Math.abs(flat[2] - (2 / (1 + Math.exp(-0.5 / Math.sqrt(1.09))) - 1)) < 1e-4, String(flat));
  for (const p of [sure, flat]) assert.ok(Math.abs(p.reduce((s, x) => s + x, 0) - 1) < 1e-5);
});

test("questions and options seen before are not encoded again, and their numbers stay bit for bit those of a first reading", async () => {
  const fresh = new DeciderEngine(undefined, { threads: 1 });
  await fresh.load();
  try {
    const route = { type: "choice", instructions: "Which team should handle this?", criteria: { billing: "payments, charges, refunds", technical: "bugs and errors", account: "login, password" } };
    const mood = { type: "score", instructions: "How upset is the customer?", criteria: ["calm", "annoyed", "furious"] };
    const ask = async (s: string, questions: Record<string, unknown>): Promise<number[][]> => {
      const req = parseSystemOne({ model: "svc-latest", state: s, questions });
      return fresh.run(fresh.plan(req.state, req.questions));
    };
    const first = await ask(state, { route });
    // state, question, 3 options
    assert.equal(fresh.encodedTexts, 5);
    assert.deepEqual(await ask(state, { route }), first);
    assert.equal(fresh.encodedTexts, 6, "only the state is read again");
    // Another state: its question and options are kept; inside a larger request they give the same numbers as alone.
    const other = "The app shows error 500 whenever I open my invoices.";
    const mixed = await ask(other, { mood, route });
    assert.equal(fresh.encodedTexts, 6 + 1 + 1 + 3, "the new state, the new question and its 3 levels");
    const alone = new DeciderEngine(undefined, { threads: 1 });
    await alone.load();
    try {
      const req = parseSystemOne({ model: "svc-latest", state: other, questions: { route } });
      assert.deepEqual(mixed[1], (await alone.run(alone.plan(req.state, req.questions)))[0]);
      assert.equal(alone.encodedTexts, 5);
    } finally {
      await alone.close();
    }
  } finally {
    await fresh.close();
  }
});

test("encoder runs: texts of nearby lengths share a padded run, a long text runs alone, no run exceeds the slot budget", () => {
  const runs = encoderRuns(new Map([[3, [0, 1]], [4, [2]], [5, [3]], [200, [4]]]));
  assert.deepEqual(runs, [[0, 1, 2, 3], [4]]);
  const many = encoderRuns(new Map([[13, Array.from({ length: 100 }, (_, i) => i)]]));
  assert.deepEqual(many.map((r) => r.length), [78, 22]);
  assert.deepEqual(many.flat(), Array.from({ length: 100 }, (_, i) => i));
  // every text exactly once, and rows x the run's longest length within the budget
  const lengths = new Map<number, number[]>();
  for (let i = 0; i < 300; i++) {
    const l = 2 + ((i * 37) % 120);
    lengths.set(l, [...(lengths.get(l) ?? []), i]);
  }
  const all = encoderRuns(lengths);
  const lengthOf = new Map([...lengths].flatMap(([l, ids]) => ids.map((i) => [i, l] as [number, number])));
  assert.deepEqual(all.flat().sort((a, b) => a - b), Array.from({ length: 300 }, (_, i) => i));
  for (const run of all) assert.ok(run.length * Math.max(...run.map((i) => lengthOf.get(i)!)) <= BATCH_TOKENS);
});

test("two encoder sessions share a job's runs evenly: the short texts of a 1 x 4 request are split, not all left beside the state", () => {
  // the bench's 1 x 4 request: a 51-token state, a 20-token question, four options of 26-27 tokens
  const lengths = [51, 20, 27, 26, 27, 27];
  const byLength = new Map<number, number[]>();
  lengths.forEach((l, i) => byLength.set(l, [...(byLength.get(l) ?? []), i]));
  const runs = encoderRuns(byLength);
  assert.deepEqual(runs, [[1, 3, 2, 4, 5], [0]]);
  /** A side's work: RUN_COST_SLOTS per run plus its padded slots. */
  const slots = (side: number[][], ls: number[]): number => side.reduce((s, rows) => s + RUN_COST_SLOTS + rows.length * Math.max(...rows.map((i) => ls[i])), 0);
  const [mine, theirs] = shareRuns(runs, (i) => lengths[i]);
  assert.deepEqual(mine, [[1, 3, 4, 5]]);
  assert.deepEqual(theirs, [[0], [2]]);
  // 123 and 108 slots, where the runs as planned would leave 150 on one side and 66 on the other
  assert.deepEqual([slots(mine, lengths), slots(theirs, lengths)], [123, 108]);
  // every row exactly once, no empty run, and the longer side never longer than with the runs dealt out whole
  for (let n = 1; n <= 60; n++) {
    const ls = Array.from({ length: n }, (_, i) => 3 + ((i * 29 + n * 7) % 90));
    const by = new Map<number, number[]>();
    ls.forEach((l, i) => by.set(l, [...(by.get(l) ?? []), i]));
    const planned = encoderRuns(by);
    const [a, b] = shareRuns(planned, (i) => ls[i]);
    assert.deepEqual([...a, ...b].flat().sort((x, y) => x - y), Array.from({ length: n }, (_, i) => i));
    assert.ok([...a, ...b].every((rows) => rows.length > 0));
    const whole = [0, 0];
    for (const rows of planned) whole[whole[1] < whole[0] ? 1 : 0] += slots([rows], ls);
    assert.ok(Math.max(slots(a, ls), slots(b, ls)) <= Math.max(...whole), `n=${n}`);
  }
});

test("a text padded inside a longer text's encoder run reads bit for bit as it does alone", async () => {
  const short = "Please refund the second payment.";
  const long = "Please refund the second payment, it was taken twice.";
  const [a, b] = [short, long].map((t) => engine.tokenize(`query: ${t}`, 510).length + 2);
  assert.ok(a < b, `${a} < ${b}`);
  assert.deepEqual(encoderRuns(new Map([[a, [0]], [b, [1]]])), [[0, 1]], "the two texts share one run");
  const [alone] = await engine.embed([short]);
  const [together, other] = await engine.embed([short, long]);
  assert.deepEqual(together, alone);
  assert.deepEqual(other, (await engine.embed([long]))[0]);
});

test("with two threads a job's encoder runs are shared with a helper thread, and every number is the same bit for bit", async () => {
  const two = new DeciderEngine(undefined, { threads: 2 });
  await two.load();
  try {
    // A long state and short options: the encoder plans several runs, the second and later shared out.
    const req = parseSystemOne({
      model: "svc-latest",
      state: `${state} `.repeat(4),
      questions: {
        route: { type: "choice", instructions: "Which team should handle this?", criteria: { billing: "payments, charges, refunds", technical: null, account: "login, password" } },
        refund: { type: "noul", instructions: "Is the customer asking for money back?" },
        mood: { type: "score", instructions: "How upset is the customer?", criteria: ["calm", "annoyed", "furious"] },
      },
    });
    assert.deepEqual(await two.run(two.plan(req.state, req.questions)), await engine.run(engine.plan(req.state, req.questions)));
  } finally {
    await two.close();
  }
});
