import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { post, startService, type Service } from "./helpers/service.js";

let svc: Service;
before(async () => {
  svc = await startService();
});
after(async () => {
  await svc.stop();
});

const choice = (n: number) => ({ type: "choice", instructions: "Pick", criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, null])) });
const base = (questions: unknown, extra: Record<string, unknown> = {}) => ({ model: "svc-latest", state: "some text", questions, ...extra });

async function problems(body: unknown, lang?: string) {
  const r = await post(svc, "/v1/systemone", Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body)), lang ? { "accept-language": lang } : {});
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.equal(r.body.error.type, "invalid_request_error");
  assert.ok(Array.isArray(r.body.detail) && r.body.detail.length > 0);
  assert.match(r.headers.get("x-request-id") ?? "", /^req_[0-9a-f]{24}$/);
  return r.body as { error: { type: string; message: string }; detail: { loc: (string | number)[]; msg: string; type: string }[] };
}

describe("422 validation over HTTP", () => {
  test("missing top-level fields are all listed", async () => {
    const b = await problems({});
    assert.deepEqual(b.detail, [
      { loc: ["body", "model"], msg: "Field required.", type: "missing" },
      { loc: ["body", "state"], msg: "Field required.", type: "missing" },
      { loc: ["body", "questions"], msg: "Field required.", type: "missing" },
    ]);
    assert.equal(b.error.message, "model: Field required.");
  });

  test("a body that is not an object", async () => {
    const b = await problems([1, 2]);
    assert.deepEqual(b.detail, [{ loc: ["body"], msg: "Input should be an object.", type: "dict_type" }]);
  });

  test("choice needs 2 to 255 options, with the spec's message", async () => {
    for (const n of [0, 1, 256]) {
      const b = await problems(base({ q: choice(n) }));
      assert.deepEqual(b.detail, [
        { loc: ["body", "questions", "q", "criteria"], msg: `A Choice needs between 2 and 255 options; got ${n}.`, type: "value_error" },
      ]);
      assert.equal(b.error.message, `questions.q.criteria: A Choice needs between 2 and 255 options; got ${n}.`);
    }
    const ok = await post(svc, "/v1/systemone", base({ q: choice(255) }));
    assert.equal(ok.status, 200);
    assert.equal(Object.keys(ok.body.answers.q.probabilities).length, 255);
  });

  test("score needs 2 to 10 levels; object form needs keys 0..n-1", async () => {
    for (const levels of [["only"], Array.from({ length: 11 }, (_, i) => `l${i}`)]) {
      const b = await problems(base({ s: { type: "score", instructions: "How much?", criteria: levels } }));
      assert.deepEqual(b.detail, [
        { loc: ["body", "questions", "s", "criteria"], msg: `A Score needs between 2 and 10 levels; got ${levels.length}.`, type: "value_error" },
      ]);
    }
    const b = await problems(base({ s: { type: "score", instructions: "How much?", criteria: { "1": "a", "2": "b" } } }));
    assert.equal(b.detail[0].msg, 'Input should be a list of level descriptions, or an object with exactly the keys "0" to "1".');
    assert.equal(b.detail[0].type, "value_error");
  });

  test("at most 64 questions, at least one", async () => {
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`q${i}`, { type: "noul", instructions: "?" }]));
    const b = await problems(base(many));
    assert.deepEqual(b.detail, [{ loc: ["body", "questions"], msg: "At most 64 questions are allowed per request; got 65.", type: "too_long" }]);
    const e = await problems(base({}));
    assert.deepEqual(e.detail, [{ loc: ["body", "questions"], msg: "At least one question is required.", type: "too_short" }]);
  });

  test("instructions at most 8,000 characters (objects rendered first)", async () => {
    const b = await problems(base({ q: { type: "noul", instructions: "x".repeat(8001) } }));
    assert.deepEqual(b.detail, [
      { loc: ["body", "questions", "q", "instructions"], msg: "Instructions may be at most 8000 characters; got 8001.", type: "string_too_long" },
    ]);
    const ok = await post(svc, "/v1/systemone", base({ q: { type: "noul", instructions: "x".repeat(8000) } }));
    assert.equal(ok.status, 200);
    const obj = await problems(base({ q: { type: "noul", instructions: { text: "y".repeat(8000) } } }));
    assert.equal(obj.detail[0].type, "string_too_long");
  });

  test("types and shapes: every problem is reported, with its path", async () => {
    const b = await problems({
      model: 7,
      state: 12,
      questions: {
        a: { type: "maybe" },
        b: "not an object",
        c: { type: "choice", instructions: 5, criteria: { x: 1, y: null } },
        d: { type: "noul", criteria: { true: "yes", other: "?" } },
        e: { type: "noul" },
        f: { type: "choice", criteria: ["x", "x"] },
        g: { instructions: "no type" },
      },
    });
    assert.deepEqual(b.detail, [
      { loc: ["body", "model"], msg: "Input should be a valid string.", type: "string_type" },
      { loc: ["body", "state"], msg: "Input should be a string, an object or an array.", type: "text_type" },
      { loc: ["body", "questions", "a", "type"], msg: "Input should be 'noul', 'choice' or 'score'.", type: "literal_error" },
      { loc: ["body", "questions", "b"], msg: "Input should be an object.", type: "dict_type" },
      { loc: ["body", "questions", "c", "instructions"], msg: "Input should be a string, an object, an array or null.", type: "text_type" },
      { loc: ["body", "questions", "c", "criteria", "x"], msg: "Input should be a string or null.", type: "string_type" },
      { loc: ["body", "questions", "d", "criteria", "other"], msg: "Unexpected key 'other': only 'true' and 'false' are allowed here.", type: "extra_forbidden" },
      { loc: ["body", "questions", "e"], msg: "A yes/no question needs instructions or criteria: there is nothing to ask.", type: "value_error" },
      { loc: ["body", "questions", "f", "criteria", 1], msg: "Duplicate option key 'x'.", type: "value_error" },
      { loc: ["body", "questions", "g", "type"], msg: "Field required.", type: "missing" },
    ]);
    assert.equal(b.error.message, "model: Input should be a valid string.");
  });

  test("images, assets, files and Box questions are refused: text only", async () => {
    const box = await problems(base({ q: { type: "box", instructions: "Where is the cat?" } }));
    assert.deepEqual(box.detail, [
      {
        loc: ["body", "questions", "q", "type"],
        msg: "This service reads text only: images, assets, files, Box questions and multipart bodies are not supported.",
        type: "text_only",
      },
    ]);
    const img = await problems({ model: "svc-latest", state: [{ type: "image", url: "https://example.com/a.png" }, "caption"], questions: { q: { type: "noul", instructions: "?" } } });
    assert.deepEqual(img.detail.map((d) => [d.loc, d.type]), [[["body", "state"], "text_only"]]);
    const file = await problems({ model: "svc-latest", state: { doc: { type: "file", file_id: "f_1" } }, questions: { q: { type: "noul", instructions: "?" } } });
    assert.equal(file.detail[0].type, "text_only");
  });

  test("validation comes before the model lookup; an unknown model with a valid body is 404", async () => {
    const r = await post(svc, "/v1/systemone", { model: "nope", state: "x", questions: { q: choice(1) } });
    assert.equal(r.status, 422);
    const m = await post(svc, "/v1/systemone", { model: "nope", state: "x", questions: { q: choice(2) } });
    assert.equal(m.status, 404);
  });
});

describe("error messages follow Accept-Language", () => {
  const body = base({ q: choice(1) });
  const cases: [string, string][] = [
    ["es", "questions.q.criteria: Una Choice necesita entre 2 y 255 opciones; se recibieron 1."],
    ["es-MX", "questions.q.criteria: Una Choice necesita entre 2 y 255 opciones; se recibieron 1."],
    ["pt-BR,pt;q=0.9", "questions.q.criteria: Uma Choice precisa de 2 a 255 opções; foram recebidas 1."],
    ["fr-CA, en;q=0.5", "questions.q.criteria: Une Choice nécessite entre 2 et 255 options ; reçu 1."],
    ["en;q=0.3, fr;q=0.2, es;q=0.9", "questions.q.criteria: Una Choice necesita entre 2 y 255 opciones; se recibieron 1."],
    ["de", "questions.q.criteria: Eine Choice benötigt zwischen 2 und 255 Optionen; erhalten: 1."],
    ["de-DE", "questions.q.criteria: Eine Choice benötigt zwischen 2 und 255 Optionen; erhalten: 1."],
    ["de-AT,de;q=0.9,en;q=0.8", "questions.q.criteria: Eine Choice benötigt zwischen 2 und 255 Optionen; erhalten: 1."],
    ["en;q=0.5, de-CH;q=0.8, fr;q=0.7", "questions.q.criteria: Eine Choice benötigt zwischen 2 und 255 Optionen; erhalten: 1."],
    ["de, ja", "questions.q.criteria: Eine Choice benötigt zwischen 2 und 255 Optionen; erhalten: 1."],
    ["ja, it", "questions.q.criteria: A Choice needs between 2 and 255 options; got 1."],
    ["de;q=0, fr;q=0.1", "questions.q.criteria: Une Choice nécessite entre 2 et 255 options ; reçu 1."],
    ["es;q=0", "questions.q.criteria: A Choice needs between 2 and 255 options; got 1."],
  ];
  for (const [header, expected] of cases) {
    test(`Accept-Language: ${header}`, async () => {
      const b = await problems(body, header);
      assert.equal(b.error.message, expected);
      assert.equal(b.error.type, "invalid_request_error");
      assert.equal(b.detail[0].type, "value_error");
    });
  }

  test("non-field errors are translated too", async () => {
    const r = await fetch(`${svc.url}/v1/models`, { headers: { "accept-language": "fr", authorization: "Bearer svc_00000000_nope-nope-nope-nope" } });
    assert.equal(r.status, 401);
    assert.deepEqual(await r.json(), { error: { type: "authentication_error", message: "Clé d'API invalide ou révoquée." }, detail: [] });
    const m = await post(svc, "/v1/systemone", { model: "x", state: "s", questions: { q: choice(2) } }, { "accept-language": "pt" });
    assert.equal(m.body.error.message, "O modelo 'x' não existe. Disponíveis: svc-latest, svc-preview, svc-1.6.0.");
  });

  test("German (de): field problems in detail[], 401, 404 and 413, with types unchanged", async () => {
    const v = await problems({ model: "svc-latest", questions: { q: choice(1) } }, "de-DE");
    assert.deepEqual(v.detail, [
      { loc: ["body", "state"], msg: "Feld erforderlich.", type: "missing" },
      { loc: ["body", "questions", "q", "criteria"], msg: "Eine Choice benötigt zwischen 2 und 255 Optionen; erhalten: 1.", type: "value_error" },
    ]);
    assert.equal(v.error.message, "state: Feld erforderlich.");

    const bad = await fetch(`${svc.url}/v1/models`, { headers: { "accept-language": "de", authorization: "Bearer svc_00000000_nope-nope-nope-nope" } });
    assert.equal(bad.status, 401);
    assert.deepEqual(await bad.json(), { error: { type: "authentication_error", message: "Ungültiger oder widerrufener API-Schlüssel." }, detail: [] });
    const none = await fetch(`${svc.url}/v1/models`, { headers: { "accept-language": "de-AT" } });
    assert.equal(none.status, 401);
    assert.deepEqual(await none.json(), { error: { type: "authentication_error", message: "API-Schlüssel fehlt: Senden Sie den Header 'Authorization: Bearer <Schlüssel>'." }, detail: [] });

    const m = await post(svc, "/v1/systemone", { model: "x", state: "s", questions: { q: choice(2) } }, { "accept-language": "de" });
    assert.equal(m.status, 404);
    assert.deepEqual(m.body, { error: { type: "not_found_error", message: "Das Modell 'x' existiert nicht. Verfügbar: svc-latest, svc-preview, svc-1.6.0." }, detail: [] });

    const big = await post(svc, "/v1/systemone", { ...base({ q: choice(2) }), state: "x".repeat(70_000) }, { "accept-language": "de" });
    assert.equal(big.status, 413);
    assert.deepEqual(big.body, { error: { type: "request_too_large", message: "Der Anfrage-Body ist nach der Dekomprimierung größer als 65536 Bytes." }, detail: [] });
  });
});
