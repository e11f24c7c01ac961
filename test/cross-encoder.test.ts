import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { answerNumbers } from "../src/engine/answer.js";
import { BuiltinEngine, createBuiltinEngine } from "../src/engine/builtin/builtin-engine.js";
import { SEP_ID, crossRows } from "../src/engine/builtin/cross.js";
import { onnxBatches } from "../src/engine/builtin/onnx-encoder.js";
import { builtinTokenizer } from "../src/engine/builtin/tokenizer.js";
import type { Question } from "../src/questions/question.js";
import { ROOT, startService, type Service } from "./helpers/service.js";
import { choice } from "./helpers/questions.js";

const CROSS_DIR = join(ROOT, "models", "builtin", "cross");

const noul = (text: string, yes: string | null = null, no: string | null = null): Question => ({ key: "n", kind: "noul", text, options: [], yes, no });

// The cross-encoder reads the languages of model.json's cross.languages by default; "on" makes it
// read every language, so these tests exercise it whatever that list is.
process.env.SVC_BUILTIN_CROSS = "on";

let engine: BuiltinEngine;
before(async () => {
  engine = createBuiltinEngine({ workers: 2 });
  await engine.load();
});
after(async () => {
  await engine.close();
});

test("the ONNX graph gives the torch module's logits (max abs difference <= 1e-4)", async () => {
  const ref = JSON.parse(readFileSync(join(CROSS_DIR, "reference.json"), "utf8")) as { rows: { ids: number[]; logit: number }[] };
  assert.ok(ref.rows.length >= 20);
  const graph = await onnxBatches(join(CROSS_DIR, "cross.onnx"), "scores", "test");
  let worst = 0;
  for (const row of ref.rows) {
    const out = await graph.embed(Int32Array.of(row.ids.length), Int32Array.from(row.ids));
    assert.equal(out.length, 1);
    worst = Math.max(worst, Math.abs(out[0] - row.logit));
  }
  assert.ok(worst <= 1e-4, `max abs difference ${worst}`);
  // The longest row is a whole 256-token pair plus the separator.
  assert.equal(Math.max(...ref.rows.map((r) => r.ids.length)), 257);
});

test("English requests are cross-encoded; a noul reads the state, SEP, question and each side", () => {
  const q = noul("Is the customer asking for a refund?");
  const plan = engine.plan("Please give me my money back.", [q]);
  assert.equal(engine.encoderOf(plan), "cross");
  assert.equal(engine.info.backend, "builtin-cross-encoder");
  assert.equal(engine.encoderOf(engine.plan("Por favor, devuélvanme el dinero.", [q])), "cross");
  const [rows] = engine.crossRows(plan);
  assert.equal(rows.length, 2);
  const sep = rows[0].indexOf(SEP_ID);
  assert.ok(sep > 0);
  assert.deepEqual(Array.from(rows[0].subarray(0, sep)), Array.from(rows[1].subarray(0, rows[1].indexOf(SEP_ID))));
  // The bare sides ("Yes", "No") are read but not billed: the plan's tokens are the state's and the question's.
  const yes = builtinTokenizer().encodeHead("Yes", 256).ids.length;
  const no = builtinTokenizer().encodeHead("No", 256).ids.length;
  assert.equal(plan.inputTokens, rows[0].length - 1 - yes);
  assert.equal(plan.inputTokens, rows[1].length - 1 - no);
  // A described side replaces its bare word, and is billed.
  const described = engine.plan("Please give me my money back.", [noul("Is the customer asking for a refund?", "The customer wants money back", null)]);
  const [dRows] = engine.crossRows(described);
  assert.equal(dRows[1].length, rows[1].length);
  assert.equal(described.inputTokens, dRows[0].length - 1);
});

test("crossRows puts the separator between the state and the hypothesis", () => {
  const p = { state: Int32Array.of(10, 11), question: Int32Array.of(20), option: Int32Array.of(30, 31), no: new Int32Array(0) };
  assert.deepEqual(crossRows("choice", [p], { yes: Int32Array.of(40), no: Int32Array.of(41) }).map((r) => Array.from(r)), [[10, 11, SEP_ID, 20, 30, 31]]);
  assert.deepEqual(crossRows("noul", [p], { yes: Int32Array.of(40), no: Int32Array.of(41) }).map((r) => Array.from(r)), [
    [10, 11, SEP_ID, 20, 30, 31],
    [10, 11, SEP_ID, 20, 41],
  ]);
});

function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

async function probabilitiesByKey(state: string, q: Question): Promise<Map<string, number>> {
  const raw = (await engine.run(engine.plan(state, [q])))[0];
  const n = answerNumbers(q.kind, raw, q.options.map((o) => o.key), engine.calibration);
  return new Map(q.options.map((o, i) => [o.key, n.probabilities[i]]));
}

test("the order of options never changes an answer (exact), with and without the prefilter", async () => {
  const few = choice("topic", "What is this ticket about?", [
    ["billing", "Payments, invoices, charges and refunds"],
    ["technical", "Bugs, errors, app or website not working"],
    ["account", "Login, password or profile"],
    ["shipping", "Delivery of physical orders"],
    ["other", null],
  ]);
  const many = choice("city", "Which city is mentioned?", Array.from({ length: 45 }, (_, i): [string, string | null] => [`c${i}`, `City number ${i} of the list`]));
  for (const q of [few, many]) {
    const state = "I was charged twice on my card for the March invoice and the app keeps logging me out.";
    const base = await probabilitiesByKey(state, q);
    for (const seed of [1, 2, 3]) {
      const other = await probabilitiesByKey(state, { ...q, options: shuffled(q.options, seed) });
      for (const [key, p] of base) assert.equal(other.get(key), p, `${q.key} ${key} seed ${seed}`);
    }
  }
});

test("a question with more than 6 options (cross.prefilter): the cross-encoder divides the bi-encoder's top 6's share, the rest keep the bi-encoder's probabilities", async (t) => {
  assert.equal(engine.config.cross?.prefilter, 6);
  const off = engineWith("off");
  t.after(() => off.close());
  const options = Array.from({ length: 40 }, (_, i): [string, string | null] => [`o${String(i).padStart(2, "0")}`, i === 7 ? "A refund of a double charge" : `Topic ${i}: gardening tools and seeds`]);
  const q = choice("x", "What does the customer want?", options);
  const keys = q.options.map((o) => o.key);
  const state = "I was charged twice, please refund one of the payments.";
  const n = answerNumbers("choice", (await engine.run(engine.plan(state, [q])))[0], keys, engine.calibration);
  const bi = answerNumbers("choice", (await off.run(off.plan(state, [q])))[0], keys, off.calibration);
  const top6 = new Set(bi.probabilities.map((p, i) => [p, i]).sort((a, b) => b[0] - a[0]).slice(0, 6).map(([, i]) => i));
  assert.ok(top6.has(7), "the refund option is among the bi-encoder's top 6");
  // Outside the top 6: exactly the bi-encoder's probabilities, none of them 0.
  for (let i = 0; i < 40; i++) if (!top6.has(i)) assert.ok(Math.abs(n.probabilities[i] - bi.probabilities[i]) < 1e-9, `${keys[i]}: ${n.probabilities[i]} vs ${bi.probabilities[i]}`);
  assert.equal(n.probabilities.filter((p) => p === 0).length, 0);
  // The top 6 share what the bi-encoder gave them, divided by the cross-encoder; the answer is one of them.
  const share = (p: number[]): number => [...top6].reduce((a, i) => a + p[i], 0);
  assert.ok(Math.abs(share(n.probabilities) - share(bi.probabilities)) < 1e-9);
  assert.ok(top6.has(n.best));
  assert.equal(keys[n.best], "o07");
  assert.ok(Math.abs(n.probabilities.reduce((a, b) => a + b, 0) - 1) < 1e-12);
  // 6 options or fewer: every one is cross-encoded, as a softmax of its own.
  const q6 = choice("y", "What does the customer want?", options.slice(0, 6));
  const raw6 = (await engine.run(engine.plan(state, [q6])))[0];
  assert.equal(raw6.filter((r) => Number.isFinite(r)).length, 6);
});

/** An engine built with SVC_BUILTIN_CROSS set to `value` (undefined: unset, model.json decides). */
function engineWith(value: string | undefined): BuiltinEngine {
  const saved = process.env.SVC_BUILTIN_CROSS;
  try {
    if (value === undefined) delete process.env.SVC_BUILTIN_CROSS;
    else process.env.SVC_BUILTIN_CROSS = value;
    return createBuiltinEngine({ workers: 1 });
  } finally {
    process.env.SVC_BUILTIN_CROSS = saved;
  }
}

const REFUND = noul("Is the customer asking for a refund?");
const TOPIC = choice("t", "What is this ticket about?", [
  ["billing", "Payments, invoices, charges and refunds"],
  ["account", "Login, password or profile"],
  ["shipping", "Delivery of physical orders"],
]);

test("clear English decisions come out right by default (choice cross-encoded, yes/no by the bi-encoder)", async (t) => {
  const byDefault = engineWith(undefined);
  t.after(() => byDefault.close());
  const cases: [string, Question, string | boolean][] = [
    ["Hi, please give me my money back for the broken blender, I don't want a replacement.", REFUND, true],
    ["Just wanted to say the new blender works great, thanks a lot!", REFUND, false],
    ["My password reset email never arrives and I cannot log in.", TOPIC, "account"],
    ["The parcel was due on Monday and it still has not been delivered.", TOPIC, "shipping"],
    ["You charged my card twice for the same invoice.", TOPIC, "billing"],
  ];
  for (const [state, q, want] of cases) {
    const raw = (await byDefault.run(byDefault.plan(state, [q])))[0];
    const n = answerNumbers(q.kind, raw, q.options.map((o) => o.key), byDefault.calibration);
    const got = q.kind === "noul" ? n.best === 1 : q.options[n.best].key;
    assert.equal(got, want, `${state} -> ${JSON.stringify(n.probabilities)}`);
  }
});

test("one request, two readers: its choice gets the cross-encoder's answer, its yes/no the bi-encoder's, exactly", async (t) => {
  const byDefault = engineWith(undefined);
  const off = engineWith("off");
  t.after(() => Promise.all([byDefault.close(), off.close()]));
  for (const state of ["I was charged twice for March, please refund one payment.", "Me cobraron dos veces en marzo, por favor devuélvanme un pago."]) {
    const plan = byDefault.plan(state, [TOPIC, REFUND]);
    assert.equal(byDefault.encoderOf(plan, 0), "cross");
    assert.equal(byDefault.encoderOf(plan, 1), off.encoderOf(off.plan(state, [REFUND])));
    const [choiceRaw, noulRaw] = await byDefault.run(plan);
    const mixed = [answerNumbers("choice", choiceRaw, TOPIC.options.map((o) => o.key), byDefault.calibration), answerNumbers("noul", noulRaw, [], byDefault.calibration)];
    // Alone: the choice read by the cross-encoder with its own calibration, the yes/no by the bi-encoders without it.
    const [crossRaw] = await engine.run(engine.plan(state, [TOPIC]));
    const [biRaw] = await off.run(off.plan(state, [REFUND]));
    const alone = [answerNumbers("choice", crossRaw, TOPIC.options.map((o) => o.key), engine.calibration), answerNumbers("noul", biRaw, [], off.calibration)];
    for (let k = 0; k < 2; k++) {
      assert.equal(mixed[k].best, alone[k].best, state);
      mixed[k].probabilities.forEach((p, i) => assert.ok(Math.abs(p - alone[k].probabilities[i]) < 1e-9, `${state}: ${p} vs ${alone[k].probabilities[i]}`));
    }
  }
});

let svc: Service;
test("over HTTP, by default: a choice is answered by the cross-encoder, 45 options too, no option called impossible", async (t) => {
  svc = await startService({ env: { SVC_BUILTIN_CROSS: "" } });
  t.after(() => svc.stop());
  const options = Object.fromEntries(Array.from({ length: 45 }, (_, i) => [`k${i}`, i === 3 ? "Refund a double charge" : `Gardening topic ${i}`]));
  const res = await fetch(`${svc.url}/v1/systemone`, {
    method: "POST",
    headers: { authorization: `Bearer ${svc.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "svc-latest", state: "I was charged twice, please refund one payment.", questions: { want: { type: "choice", instructions: "What does the customer want?", criteria: options } } }),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { answers: Record<string, { choice: string; probabilities: Record<string, number> }> };
  const probs = Object.values(body.answers.want.probabilities);
  assert.equal(probs.length, 45);
  assert.equal(probs.filter((p) => p === 0).length, 0);
  assert.ok(Math.abs(probs.reduce((a, b) => a + b, 0) - 1) < 1e-6);
  assert.equal(body.answers.want.choice, "k3");
});

test("SVC_BUILTIN_CROSS: unset follows model.json's cross.languages and cross.types, on reads every language and type, off leaves the cross-encoder out, a bad value is refused", async () => {
  const english = "Please give me my money back.";
  const spanish = "Por favor, devuélvanme el dinero.";
  const byDefault = engineWith(undefined);
  const cross = byDefault.config.cross;
  assert.deepEqual(cross?.languages, ["en", "es", "pt", "fr", "de"]);
  assert.deepEqual(cross?.types, ["choice"]);
  assert.equal(byDefault.info.backend, "builtin-use-lite+multilingual+cross");
  assert.match(byDefault.info.description, /^Built-in models on CPU: choice questions are read by a cross-encoder/);
  for (const [state, bi] of [[english, "teacher"], [spanish, "student"]] as const) {
    const plan = byDefault.plan(state, [TOPIC, REFUND, { ...TOPIC, kind: "score", key: "s" }]);
    assert.deepEqual([0, 1, 2].map((i) => byDefault.encoderOf(plan, i)), ["cross", bi, bi], state);
  }
  await byDefault.close();
  const on = engineWith("on");
  assert.deepEqual([0, 1].map((i) => on.encoderOf(on.plan(spanish, [TOPIC, REFUND]), i)), ["cross", "cross"]);
  assert.equal(on.info.backend, "builtin-cross-encoder");
  await on.close();
  const off = engineWith("off");
  assert.equal(off.encoderOf(off.plan(english, [TOPIC])), "teacher");
  assert.equal(off.info.backend, "builtin-use-lite+multilingual");
  await off.close();
  assert.throws(() => engineWith("yes"), /SVC_BUILTIN_CROSS must be on, off or int8, not "yes"/);
});
