import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import Database from "better-sqlite3";
import { get, post, startService, type Service } from "./helpers/service.js";

let svc: Service;
let defaultThreshold: number;
before(async () => {
  svc = await startService({ env: { SVC_PER_MINUTE: "1000" } });
  defaultThreshold = (await get(svc, "/v1/models")).body.models[0].default_min_confidence;
});
after(async () => {
  await svc.stop();
});

const state = "Hi, I ordered a blue jacket two weeks ago and it still has not arrived. The tracking page says nothing. Where is my package?";
const native = {
  model: "svc-latest",
  state,
  questions: {
    shipping: { type: "binary", question: "Is the customer asking about a delivery?", yes: "it is about a package or delivery", no: "it is about something else" },
    topic: { type: "choice", question: "What is this message about?", options: { shipping: "delivery and tracking", billing: "payments and refunds", account: "login and password" } },
    tone: { type: "scale", question: "How upset is the customer?", levels: ["calm", "a bit annoyed", "angry"] },
  },
};
const compatible = {
  model: "svc-latest",
  state,
  questions: {
    shipping: { type: "noul", instructions: "Is the customer asking about a delivery?", criteria: { true: "it is about a package or delivery", false: "it is about something else" } },
    topic: { type: "choice", instructions: "What is this message about?", criteria: { shipping: "delivery and tracking", billing: "payments and refunds", account: "login and password" } },
    tone: { type: "score", instructions: "How upset is the customer?", criteria: ["calm", "a bit annoyed", "angry"] },
  },
};

describe("POST /v1/decide", () => {
  test("answers every type with the same numbers and the same bill as /v1/systemone", async () => {
    const d = await post(svc, "/v1/decide", { ...native, min_confidence: 0 });
    const s = await post(svc, "/v1/systemone", compatible);
    assert.equal(d.status, 200);
    assert.equal(s.status, 200);
    assert.equal(d.body.id, d.headers.get("x-request-id"));
    assert.equal(d.body.model, "svc-1.6.0");
    assert.deepEqual(d.body.usage, s.body.usage);
    const b = d.body.answers.shipping;
    assert.deepEqual(Object.keys(b).sort(), ["abstained", "answer", "confidence", "min_confidence", "probability", "state_truncated", "type"]);
    assert.equal(b.type, "binary");
    assert.equal(b.probability, s.body.answers.shipping.noul);
    assert.equal(b.answer, b.probability >= 0.5);
    assert.equal(b.abstained, false);
    const p = b.probability;
    const h = -(p * Math.log(p) + (1 - p) * Math.log(1 - p));
    assert.ok(Math.abs(b.confidence - (1 - h / Math.log(2))) < 1e-9);
    const c = d.body.answers.topic;
    assert.deepEqual(c.probabilities, s.body.answers.topic.probabilities);
    assert.equal(c.confidence, s.body.answers.topic.confidence);
    assert.equal(c.answer, s.body.answers.topic.choice);
    assert.equal(c.answer, "shipping");
    const t = d.body.answers.tone;
    assert.deepEqual(t.probabilities, s.body.answers.tone.probabilities);
    assert.equal(t.answer, s.body.answers.tone.score);
    const probs = [0, 1, 2].map((i) => t.probabilities[String(i)]);
    assert.equal(t.level, probs.indexOf(Math.max(...probs)));
    // both endpoints are billed alike, each with its own endpoint in the ledger
    const db = new Database(join(svc.dataDir, "svc.sqlite"), { readonly: true });
    const rows = db.prepare("SELECT endpoint, input_tokens FROM usage WHERE request_id IN (?, ?) ORDER BY endpoint").all(d.body.id, s.headers.get("x-request-id")) as { endpoint: string; input_tokens: number }[];
    db.close();
    assert.deepEqual(rows, [
      { endpoint: "/v1/decide", input_tokens: d.body.usage.input_tokens },
      { endpoint: "/v1/systemone", input_tokens: d.body.usage.input_tokens },
    ]);
  });

  test("a state cut for one question only: that answer says so, and so does the response's header", async () => {
    // ~150 tokens of state fit beside a short question but not beside ~150 tokens of question.
    const long = "The parcel was sent from the warehouse on Monday morning. ".repeat(12);
    const r = await post(svc, "/v1/decide", {
      model: "svc-latest",
      state: long,
      questions: {
        short: { type: "binary", question: "Late?" },
        wordy: { type: "binary", question: "Considering every detail the customer gives about the shipment and its route, is it late? ".repeat(7) },
      },
    });
    assert.equal(r.status, 200);
    assert.deepEqual([r.body.answers.short.state_truncated, r.body.answers.wordy.state_truncated], [false, true]);
    assert.equal(r.headers.get("x-state-truncated"), "true");
  });

  test("abstains below the threshold: per question beats per request beats the model default", async () => {
    const base = await post(svc, "/v1/decide", { ...native, min_confidence: 0 });
    const conf = base.body.answers.topic.confidence as number;
    const above = Math.min(1, conf + 1e-6);
    const below = Math.max(0, conf - 1e-6);
    const r = await post(svc, "/v1/decide", {
      ...native,
      min_confidence: above,
      questions: { ...native.questions, topic: { ...native.questions.topic, min_confidence: below } },
    });
    assert.equal(r.body.answers.topic.abstained, false);
    assert.equal(r.body.answers.topic.answer, "shipping");
    assert.equal(r.body.answers.topic.min_confidence, below);
    const r2 = await post(svc, "/v1/decide", { ...native, min_confidence: above });
    assert.equal(r2.body.answers.topic.abstained, true);
    assert.equal(r2.body.answers.topic.answer, null);
    assert.deepEqual(r2.body.answers.topic.probabilities, base.body.answers.topic.probabilities);
    const all = await post(svc, "/v1/decide", { ...native, min_confidence: 1 });
    for (const a of Object.values(all.body.answers) as { abstained: boolean; answer: unknown; confidence: number }[]) {
      assert.equal(a.abstained, a.confidence < 1);
      if (a.abstained) assert.equal(a.answer, null);
    }
    assert.equal(all.body.answers.tone.level, null);
    const dflt = await post(svc, "/v1/decide", native);
    for (const a of Object.values(dflt.body.answers) as { abstained: boolean; confidence: number; min_confidence: number }[]) {
      assert.equal(a.min_confidence, defaultThreshold);
      assert.equal(a.abstained, a.confidence < defaultThreshold);
    }
  });

  test("validation uses this endpoint's field names, in every language", async () => {
    const r = await post(svc, "/v1/decide", {
      model: "svc-latest",
      state: "x",
      min_confidence: 2,
      questions: {
        a: { type: "noul", question: "?" },
        b: { type: "choice", question: "?", options: { only: null } },
        c: { type: "scale", question: "?", levels: ["one"], min_confidence: "high" },
        d: { type: "binary" },
        e: { type: "choice", question: "?" },
      },
    });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.detail, [
      { loc: ["body", "min_confidence"], msg: "Input should be a number from 0 to 1.", type: "number_type" },
      { loc: ["body", "questions", "a", "type"], msg: "Input should be 'binary', 'choice' or 'scale'.", type: "literal_error" },
      { loc: ["body", "questions", "b", "options"], msg: "A Choice needs between 2 and 255 options; got 1.", type: "value_error" },
      { loc: ["body", "questions", "c", "levels"], msg: "A Score needs between 2 and 10 levels; got 1.", type: "value_error" },
      { loc: ["body", "questions", "c", "min_confidence"], msg: "Input should be a number from 0 to 1.", type: "number_type" },
      { loc: ["body", "questions", "d", "question"], msg: "Field required.", type: "missing" },
      { loc: ["body", "questions", "e", "options"], msg: "Field required.", type: "missing" },
    ]);
    assert.equal(r.body.error.message, "min_confidence: Input should be a number from 0 to 1.");
    const expected: Record<string, string> = {
      es: "questions.b.options: Una Choice necesita entre 2 y 255 opciones; se recibieron 1.",
      pt: "questions.b.options: Uma Choice precisa de 2 a 255 opções; foram recebidas 1.",
      fr: "questions.b.options: Une Choice nécessite entre 2 et 255 options ; reçu 1.",
      de: "questions.b.options: Eine Choice benötigt zwischen 2 und 255 Optionen; erhalten: 1.",
      en: "questions.b.options: A Choice needs between 2 and 255 options; got 1.",
    };
    for (const [lang, msg] of Object.entries(expected)) {
      const l = await post(svc, "/v1/decide", { model: "svc-latest", state: "x", questions: { b: { type: "choice", question: "?", options: { only: null } } } }, { "accept-language": lang });
      assert.equal(l.status, 422);
      assert.equal(l.body.error.message, msg);
    }
  });

  test("shares auth, model resolution and errors with /v1/systemone", async () => {
    const noKey = await fetch(`${svc.url}/v1/decide`, { method: "POST", body: JSON.stringify(native) });
    assert.equal(noKey.status, 401);
    const unknown = await post(svc, "/v1/decide", { ...native, model: "nope" });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.type, "not_found_error");
    const alias = await post(svc, "/v1/decide", { ...native, model: "jev-preview" });
    assert.equal(alias.status, 200);
    assert.equal(alias.body.model, "svc-preview");
    const arrayOptions = await post(svc, "/v1/decide", { model: "svc-latest", state, questions: { q: { type: "choice", question: "Topic?", options: ["shipping", "billing"] } } });
    assert.equal(arrayOptions.status, 200);
    assert.deepEqual(Object.keys(arrayOptions.body.answers.q.probabilities).sort(), ["billing", "shipping"]);
  });
});
