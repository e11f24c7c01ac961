import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { get, post, startService, type Service } from "./helpers/service.js";

let svc: Service;
before(async () => {
  svc = await startService();
});
after(async () => {
  await svc.stop();
});

const ticket = "I was charged twice for my subscription this month. Please refund the extra payment to my card.";

function assertProbabilities(p: Record<string, number>, keys: string[]): void {
  assert.deepEqual(Object.keys(p).sort(), [...keys].sort());
  const sum = Object.values(p).reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(sum - 1) < 1e-6, `probabilities sum to ${sum}`);
  for (const v of Object.values(p)) assert.ok(v >= 0 && v <= 1);
}

function confidenceOf(p: number[]): number {
  const h = -p.filter((x) => x > 0).reduce((s, x) => s + x * Math.log(x), 0);
  return 1 - h / Math.log(p.length);
}

function assertRequestIds(headers: Headers): void {
  const id = headers.get("x-request-id");
  assert.match(id ?? "", /^req_[0-9a-f]{24}$/);
  assert.equal(headers.get("x-alt-request-id"), id);
  assert.equal(headers.get("x-typesafe-request-id"), id);
}

describe("POST /v1/systemone answers", () => {
  test("answers all three types with the documented shapes and numbers", async () => {
    const r = await post(svc, "/v1/systemone", {
      model: "svc-latest",
      state: ticket,
      questions: {
        topic: { type: "choice", instructions: "What is this ticket about?", criteria: { billing: "payments, charges, refunds, invoices", technical: "bugs, errors, crashes", shipping: null } },
        refund: { type: "noul", instructions: "Is the customer asking for a refund?" },
        anger: { type: "score", instructions: "How upset is the customer?", criteria: ["calm", "annoyed", "furious"] },
      },
      some_unknown_field: { ignored: true },
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "application/json; charset=utf-8");
    assertRequestIds(r.headers);
    assert.equal(r.body.model, "svc-1.6.0");
    assert.deepEqual(Object.keys(r.body), ["model", "answers", "usage"]);
    assert.equal(r.body.usage.output_tokens, 0);
    assert.ok(Number.isInteger(r.body.usage.input_tokens) && r.body.usage.input_tokens > 0);

    const topic = r.body.answers.topic;
    assert.deepEqual(Object.keys(topic).sort(), ["choice", "confidence", "probabilities", "type"]);
    assert.equal(topic.type, "choice");
    assertProbabilities(topic.probabilities, ["billing", "technical", "shipping"]);
    assert.equal(topic.choice, "billing");
    const tp = Object.values(topic.probabilities) as number[];
    assert.ok(Math.abs(topic.confidence - confidenceOf(tp)) < 1e-9);

    const refund = r.body.answers.refund;
    assert.deepEqual(Object.keys(refund).sort(), ["noul", "type"]);
    assert.ok(refund.noul >= 0 && refund.noul <= 1);

    const anger = r.body.answers.anger;
    assert.deepEqual(Object.keys(anger).sort(), ["confidence", "legend", "probabilities", "score", "type"]);
    assert.deepEqual(anger.legend, { "0": "calm", "1": "annoyed", "2": "furious" });
    assertProbabilities(anger.probabilities, ["0", "1", "2"]);
    const expected = [0, 1, 2].reduce((s, i) => s + i * anger.probabilities[String(i)], 0);
    assert.ok(Math.abs(anger.score - expected) < 1e-5);
  });

  test("answers do not depend on the order of options, and the same request costs the same", async () => {
    const ask = (criteria: Record<string, string | null>) =>
      post(svc, "/v1/systemone", {
        model: "svc-latest",
        state: ticket,
        questions: { q: { type: "choice", instructions: "Which team should handle this?", criteria } },
      });
    const a = await ask({ billing: "money", support: "how-to questions", engineering: "bugs", sales: null });
    const b = await ask({ sales: null, engineering: "bugs", billing: "money", support: "how-to questions" });
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    for (const k of ["billing", "support", "engineering", "sales"]) {
      assert.equal(a.body.answers.q.probabilities[k], b.body.answers.q.probabilities[k]);
    }
    assert.equal(a.body.answers.q.choice, b.body.answers.q.choice);
    assert.equal(a.body.answers.q.confidence, b.body.answers.q.confidence);
    assert.equal(a.body.usage.input_tokens, b.body.usage.input_tokens);
  });

  test("more options cost more tokens; a long state is cut at 256 tokens per pair", async () => {
    const q = (n: number, state: string) =>
      post(svc, "/v1/systemone", {
        model: "svc-latest",
        state,
        questions: { q: { type: "choice", instructions: "Pick one", criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, null])) } },
      });
    const two = await q(2, ticket);
    const four = await q(4, ticket);
    assert.ok(four.body.usage.input_tokens > two.body.usage.input_tokens);
    assert.equal(four.headers.get("x-state-truncated"), "false");
    const long = "word ".repeat(5000);
    const capped = await q(3, long);
    assert.equal(capped.status, 200);
    assert.equal(capped.body.usage.input_tokens, 3 * 256);
    assert.equal(capped.headers.get("x-state-truncated"), "true");
  });

  test("state and instructions may be objects or arrays; criteria arrays and score objects are accepted", async () => {
    const r = await post(svc, "/v1/systemone", {
      model: "jev-latest",
      state: { subject: "Refund", body: ticket, tags: ["billing", "urgent"] },
      questions: {
        a: { type: "choice", instructions: { ask: "which area" }, criteria: ["billing", "technical"] },
        b: { type: "score", instructions: ["how", "urgent"], criteria: { "0": "low", "1": "medium", "2": "high" } },
        c: { type: "noul", criteria: { true: "the message is about money", false: "it is not" } },
        d: { type: "choice", instructions: null, criteria: { billing: null, technical: null } },
      },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body.answers.a.probabilities).sort(), ["billing", "technical"]);
    assert.deepEqual(r.body.answers.b.legend, { "0": "low", "1": "medium", "2": "high" });
    assert.equal(r.body.answers.c.type, "noul");
    assert.equal(r.body.answers.d.type, "choice");
  });

  test("any string is an option key, including __proto__ and constructor", async () => {
    // Written as JSON text: in a JS object literal, __proto__ would set the prototype, not a key.
    const body =
      `{"model": "svc-latest", "state": ${JSON.stringify(ticket)}, "questions": {` +
      `"__proto__": {"type": "choice", "instructions": "Which?", "criteria": {"__proto__": "odd key", "constructor": null, "": "empty key", "billing": "money"}},` +
      `"s": {"type": "score", "instructions": "How much?", "criteria": {"0": "__proto__", "1": "toString"}}}}`;
    const r = await post(svc, "/v1/systemone", Buffer.from(body));
    assert.equal(r.status, 200);
    const parsed = r.body;
    assert.ok(Object.prototype.hasOwnProperty.call(parsed.answers, "__proto__"));
    const q = parsed.answers["__proto__"];
    assert.deepEqual(Object.keys(q.probabilities).sort(), ["", "__proto__", "billing", "constructor"]);
    assert.deepEqual(parsed.answers.s.legend, { "0": "__proto__", "1": "toString" });
  });

  test("every model alias resolves; the answer names the versioned model", async () => {
    const names: [string, string][] = [
      ["svc-latest", "svc-1.6.0"],
      ["svc-1.6.0", "svc-1.6.0"],
      ["svc-preview", "svc-preview"],
      ["alt-latest", "svc-1.6.0"],
      ["alt-preview", "svc-preview"],
      ["alt-1.0.0", "svc-1.6.0"],
      ["alt-1.12.3", "svc-1.6.0"],
      ["jev-latest", "svc-1.6.0"],
      ["jev-preview", "svc-preview"],
      ["jev-1.1.0", "svc-1.6.0"],
    ];
    for (const [sent, answered] of names) {
      const r = await post(svc, "/v1/systemone", { model: sent, state: "hi", questions: { q: { type: "noul", instructions: "Is this a greeting?" } } });
      assert.equal(r.status, 200, sent);
      assert.equal(r.body.model, answered, sent);
    }
    for (const bad of ["gpt-4", "svc-2.0.0", "alt-2.0.0", "jev-1.x.y", "alt-1.0", "SVC-LATEST", ""]) {
      const r = await post(svc, "/v1/systemone", { model: bad, state: "hi", questions: { q: { type: "noul", instructions: "?" } } });
      assert.equal(r.status, 404, bad);
      assert.equal(r.body.error.type, "not_found_error");
      assert.equal(r.body.error.message, `Model '${bad}' does not exist. Available: svc-latest, svc-preview, svc-1.6.0.`);
      assert.deepEqual(r.body.detail, []);
      assertRequestIds(r.headers);
    }
  });

  test("the long-context switch headers are ignored", async () => {
    const body = { model: "svc-latest", state: ticket, questions: { q: { type: "noul", instructions: "Is this about money?" } } };
    const plain = await post(svc, "/v1/systemone", body);
    const withSwitch = await post(svc, "/v1/systemone", body, {
      "Alt-Danger-Zone-Long-Context": "true",
      "TypeSafe-Danger-Zone-Long-Context": "true",
    });
    assert.equal(withSwitch.status, 200);
    assert.deepEqual(withSwitch.body, plain.body);
  });
});

describe("request ids", () => {
  test("start with the time in ms (11 hex digits), so they sort in the order requests arrived", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const before = Date.now();
      const r = await fetch(`${svc.url}/healthz`);
      const after = Date.now();
      const id = r.headers.get("x-request-id") ?? "";
      assert.match(id, /^req_[0-9a-f]{24}$/);
      const ms = parseInt(id.slice(4, 15), 16);
      assert.ok(ms >= before && ms <= after, `${id}: ${ms} not in [${before}, ${after}]`);
      ids.push(id);
      await new Promise((r) => setTimeout(r, 3));
    }
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids.map((id) => id.slice(15))).size, 3);
  });
});

describe("GET /v1/models and health", () => {
  test("lists the public model names in the documented shape", async () => {
    const r = await get(svc, "/v1/models");
    assert.equal(r.status, 200);
    assertRequestIds(r.headers);
    assert.deepEqual(
      r.body.models.map((m: { name: string }) => m.name),
      ["svc-latest", "svc-preview", "svc-1.6.0"],
    );
    for (const m of r.body.models) {
      assert.equal(typeof m.description, "string");
      assert.match(m.release_date, /^\d{4}-\d{2}-\d{2}$/);
      assert.equal(m.max_tokens_per_pair, 256);
      assert.ok(m.default_min_confidence >= 0 && m.default_min_confidence <= 1);
    }
    assert.deepEqual(r.body.models[0].aliases, ["alt-latest", "jev-latest", "alt-1.x.y", "jev-1.x.y"]);
  });

  test("/healthz needs no key; /v1/models does", async () => {
    const h = await fetch(`${svc.url}/healthz`);
    assert.equal(h.status, 200);
    assert.deepEqual(await h.json(), { status: "ok", model: "ready" });
    assert.match(h.headers.get("x-request-id") ?? "", /^req_[0-9a-f]{24}$/);
    const m = await fetch(`${svc.url}/v1/models`);
    assert.equal(m.status, 401);
    assert.equal(m.headers.get("www-authenticate"), "Bearer");
    assert.deepEqual(await m.json(), {
      error: { type: "authentication_error", message: "Missing API key: send the header 'Authorization: Bearer <key>'." },
      detail: [],
    });
  });

  test("unknown paths are 404 and wrong methods 405, in the error shape", async () => {
    const r = await get(svc, "/v1/nothing");
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { error: { type: "not_found_error", message: "No such endpoint: GET /v1/nothing." }, detail: [] });
    const m = await get(svc, "/v1/systemone");
    assert.equal(m.status, 405);
    assert.equal(m.headers.get("allow"), "POST");
    assert.equal(m.body.error.type, "invalid_request_error");
  });

  test("request ids are unique per response", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${svc.url}/healthz`);
      await r.arrayBuffer();
      ids.add(r.headers.get("x-request-id")!);
    }
    assert.equal(ids.size, 20);
  });
});
