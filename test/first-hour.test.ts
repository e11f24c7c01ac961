import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cli, post, ROOT, startService, type Service } from "./helpers/service.js";

let svc: Service;
before(async () => {
  // Its quota test repeats one request to see each billed: the retry cache is off here (test/retry-cache.test.ts).
  svc = await startService({ env: { SVC_PER_MINUTE: "0", SVC_CACHE_WINDOW_MS: "0" } });
});
after(async () => {
  await svc.stop();
});

/**
 * How far a number may move between CPUs: the integer products are the same everywhere, but onnxruntime's float
 * kernels between them (GELU, softmax, LayerNorm, the attention's products) take other paths on other instruction
 * sets, and a last-bit difference can move a token's 8-bit code. Measured: up to 0.00064 between 2 AMD EPYC cores
 * with AVX-512 VNNI and 2 AMD EPYC cores without it (2026-11-28).
 */
const ACROSS_CPUS = 0.002;

/** A README answer block against the service's answer: every number within its printed 3 decimals and ACROSS_CPUS, tokens and the rest exact. */
function compareShown(want: unknown, got: unknown, path: string): void {
  if (typeof want === "number" && !path.endsWith("_tokens")) {
    assert.equal(typeof got, "number", path);
    assert.ok(Math.abs((got as number) - want) <= 0.0005 + ACROSS_CPUS, `${path}: README shows ${want}, the service answers ${String(got)}`);
  } else if (typeof want === "object" && want !== null) {
    assert.deepEqual(Object.keys(got as object).sort(), Object.keys(want).sort(), path);
    for (const [k, v] of Object.entries(want)) compareShown(v, (got as Record<string, unknown>)[k], `${path}.${k}`);
  } else assert.equal(got, want, path);
}

const noul = { model: "svc-latest", state: "hello there", questions: { q: { type: "noul", instructions: "Is this a greeting?" } } };

describe("what a new user hit", () => {
  test("the README's first request gets the answer the README shows (numbers to their printed 3 decimals give or take ACROSS_CPUS, tokens exact)", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const request = /\n  -d '(\{[\s\S]*?\})'\n```/.exec(readme);
    const shown = /\nThe answer [^\n]*\n[^\n]*\n\n```json\n([\s\S]*?)\n```/.exec(readme);
    assert.ok(request && shown, "README: the curl body and the answer block");
    const r = await post(svc, "/v1/systemone", JSON.parse(request[1]));
    assert.equal(r.status, 200);
    compareShown(JSON.parse(shown[1]), r.body, "answer");
  });

  test("the README's /v1/decide request gets the answer the README shows (numbers to their printed 3 decimals give or take ACROSS_CPUS, tokens exact)", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const request = /\/v1\/decide -H [^\n]*-d '(\{[\s\S]*?\})'\n```/.exec(readme);
    const shown = /\nFor the request above the built-in model answers [^\n]*\n[^\n]*\n\n```json\n([\s\S]*?)\n```/.exec(readme);
    assert.ok(request && shown, "README: the /v1/decide curl body and its answer block");
    const r = await post(svc, "/v1/decide", JSON.parse(request[1]));
    assert.equal(r.status, 200);
    const { id, model_hash, ...rest } = r.body as { id: string; model_hash: string };
    assert.match(id, /^req_/);
    assert.match(model_hash, /^[0-9a-f]{12}$/);
    compareShown(JSON.parse(shown[1]), rest, "answer");
  });

  test("a key sent without 'Bearer ' is told the scheme is missing, not that the key is invalid", async () => {
    const r = await post(svc, "/v1/systemone", noul, { authorization: svc.key });
    assert.equal(r.status, 401);
    assert.equal(r.headers.get("www-authenticate"), "Bearer");
    assert.deepEqual(r.body, {
      error: { type: "authentication_error", message: "The Authorization header must use the Bearer scheme: send 'Authorization: Bearer <key>' ('Bearer ' is missing)." },
      detail: [],
    });
    const basic = await post(svc, "/v1/systemone", noul, { authorization: "Basic dXNlcjpwYXNz" });
    assert.equal(basic.body.error.message, r.body.error.message);
    const bad = await post(svc, "/v1/systemone", noul, { authorization: "Bearer svc_00000000_nope-nope-nope-nope" });
    assert.equal(bad.body.error.message, "Invalid or revoked API key.");
  });

  test("a gzip or zstd body without Content-Encoding names the header it lacks", async () => {
    const gz = await post(svc, "/v1/systemone", gzipSync(JSON.stringify(noul)));
    assert.equal(gz.status, 400);
    assert.deepEqual(gz.body, {
      error: { type: "invalid_request_error", message: "The body is gzip-compressed but has no Content-Encoding header: send 'Content-Encoding: gzip'." },
      detail: [],
    });
    const zst = execFileSync("zstd", ["-q", "-c"], { input: JSON.stringify(noul) });
    const z = await post(svc, "/v1/decide", zst, { "accept-language": "fr" });
    assert.equal(z.status, 400);
    assert.equal(z.body.error.message, "Le corps est compressé en zstd mais l'en-tête Content-Encoding manque : envoyez 'Content-Encoding: zstd'.");
    // With the header, the same bytes are answered.
    assert.equal((await post(svc, "/v1/systemone", gzipSync(JSON.stringify(noul)), { "content-encoding": "gzip" })).status, 200);
  });

  test("invalid JSON is located by line and column", async () => {
    const cases: [string, number, number][] = [
      ['{"model": "svc-latest",\n  "state": "x",\n  "questions": {"q": {"type": "noul",}}\n}', 3, 38],
      ['{"a": }', 1, 7],
      ['{"a": 1', 1, 8],
      ["", 1, 1],
      ['{"a": "x\ny"}', 1, 9],
      ["[1, 2] x", 1, 8],
    ];
    for (const [text, line, column] of cases) {
      const r = await post(svc, "/v1/systemone", Buffer.from(text));
      assert.equal(r.status, 400, text);
      assert.deepEqual(r.body, {
        error: { type: "invalid_request_error", message: `The body is not valid JSON: line ${line}, column ${column}.`, line, column },
        detail: [],
      }, text);
    }
    const es = await post(svc, "/v1/systemone", Buffer.from("{\n\n  oops"), { "accept-language": "es" });
    assert.equal(es.body.error.message, "El cuerpo no es JSON válido: línea 3, columna 3.");
  });

  test("a state longer than a pair's tokens is cut and the answer says so, on both endpoints; a short one is not", async () => {
    const long = "The customer wrote a very long letter about many things. ".repeat(60);
    const s1 = await post(svc, "/v1/systemone", { ...noul, state: long });
    assert.equal(s1.status, 200);
    assert.equal(s1.headers.get("x-state-truncated"), "true");
    const s2 = await post(svc, "/v1/systemone", noul);
    assert.equal(s2.headers.get("x-state-truncated"), "false");
    const decide = {
      model: "svc-latest",
      state: long,
      questions: { b: { type: "binary", question: "Is this long?" }, c: { type: "choice", question: "Which?", options: ["a", "b"] } },
    };
    const d1 = await post(svc, "/v1/decide", decide);
    assert.equal(d1.status, 200);
    assert.equal(d1.headers.get("x-state-truncated"), "true");
    assert.equal(d1.body.answers.b.state_truncated, true);
    assert.equal(d1.body.answers.c.state_truncated, true);
    const d2 = await post(svc, "/v1/decide", { ...decide, state: "short" });
    assert.equal(d2.headers.get("x-state-truncated"), "false");
    assert.equal(d2.body.answers.b.state_truncated, false);
  });

  test("an empty state is answered with well-formed numbers", async () => {
    const body = {
      model: "svc-latest",
      state: "",
      questions: {
        n: { type: "noul", instructions: "Is the customer angry?" },
        c: { type: "choice", instructions: "What is this about?", criteria: { billing: "payments", shipping: "deliveries" } },
        s: { type: "score", instructions: "How urgent?", criteria: ["low", "high"] },
      },
    };
    const r = await post(svc, "/v1/systemone", body);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-state-truncated"), "false");
    assert.ok(r.body.answers.n.noul >= 0 && r.body.answers.n.noul <= 1);
    for (const k of ["c", "s"]) {
      const sum = Object.values(r.body.answers[k].probabilities as Record<string, number>).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) < 1e-9);
      assert.ok(r.body.answers[k].confidence >= 0 && r.body.answers[k].confidence <= 1);
    }
    assert.ok(r.body.usage.input_tokens > 0);
    const d = await post(svc, "/v1/decide", { model: "svc-latest", state: "", questions: { b: { type: "binary", question: "Is it late?" } } });
    assert.equal(d.status, 200);
    assert.equal(typeof d.body.answers.b.abstained, "boolean");
  });

  test("score is the full double sum of i * p_i on both endpoints, as documented", async () => {
    const levels = ["calm", "annoyed", "furious"];
    const s = await post(svc, "/v1/systemone", { model: "svc-latest", state: "This is the third time I write. Nobody answers!", questions: { m: { type: "score", instructions: "How upset?", criteria: levels } } });
    const a = s.body.answers.m;
    const expected = Object.values(a.probabilities as Record<string, number>).reduce((sum, p, i) => sum + i * p, 0);
    assert.equal(a.score, expected);
    const d = await post(svc, "/v1/decide", { model: "svc-latest", state: "This is the third time I write. Nobody answers!", min_confidence: 0, questions: { m: { type: "scale", question: "How upset?", levels } } });
    assert.equal(d.body.answers.m.answer, expected);
  });

  test("a request larger than the key's whole monthly quota is 413 naming the quota, without Retry-After, and refusals leave the minute window alone", async () => {
    const tiny = { model: "svc-latest", state: "hi", questions: { q: { type: "noul", instructions: "Hi?" } } };
    const cost = (await post(svc, "/v1/systemone", tiny)).body.usage.input_tokens as number;
    // The quota holds exactly one tiny request; two requests a minute.
    const created = await cli(["keys", "create", "--name", "small", "--monthly-tokens", String(cost), "--per-minute", "2"], { SVC_DATA_DIR: svc.dataDir });
    const small = { url: svc.url, key: created.stdout.trim().split("\n").pop()! };
    const big = { ...tiny, state: "word ".repeat(40) };
    for (let i = 0; i < 3; i++) {
      const r = await post(small, "/v1/systemone", big);
      assert.equal(r.status, 413);
      assert.equal(r.headers.get("retry-after"), null);
      assert.equal(r.body.error.type, "request_too_large");
      assert.equal(r.body.error.limit, "key_limit");
      assert.equal(r.body.error.window, "monthly_quota");
      assert.match(r.body.error.message, new RegExp(`^This request alone needs \\d+ input tokens, more than this key's whole monthly quota of ${cost}: it cannot be answered under this quota, now or later\\.`));
    }
    // The three refusals did not use the key's two requests a minute.
    assert.equal((await post(small, "/v1/systemone", tiny)).status, 200);
    // Then the quota is spent: each refusal by it gives its place in the minute back, so the
    // per-minute limit (2) never refuses these.
    for (let i = 0; i < 3; i++) {
      const r = await post(small, "/v1/systemone", tiny);
      assert.equal(r.status, 429);
      assert.equal(r.body.error.window, "monthly_quota", `refusal ${i + 1}`);
    }
  });

  test("a null score level is refused with a 422 naming the level", async () => {
    const r = await post(svc, "/v1/systemone", { model: "svc-latest", state: "x", questions: { q: { type: "score", criteria: [null, "good", null] } } });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, {
      error: { type: "invalid_request_error", message: "questions.q.criteria.0: A level must be a string, an object or an array, not null." },
      detail: [
        { loc: ["body", "questions", "q", "criteria", 0], msg: "A level must be a string, an object or an array, not null.", type: "string_type" },
        { loc: ["body", "questions", "q", "criteria", 2], msg: "A level must be a string, an object or an array, not null.", type: "string_type" },
      ],
    });
    const d = await post(svc, "/v1/decide", { model: "svc-latest", state: "x", questions: { q: { type: "scale", question: "?", levels: { "0": "bad", "1": null } } } });
    assert.equal(d.status, 422);
    assert.deepEqual(d.body.detail[0].loc, ["body", "questions", "q", "levels", 1]);
  });

  test("score levels given as objects or arrays come back in legend exactly as sent", async () => {
    const criteria = [{ label: "low", hint: "can wait" }, "medium", ["high", { within: "1h" }]];
    const r = await post(svc, "/v1/systemone", { model: "svc-latest", state: "The server is down.", questions: { u: { type: "score", instructions: "How urgent?", criteria } } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.answers.u.legend, { "0": criteria[0], "1": "medium", "2": criteria[2] });
  });
});
