import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Admission } from "../src/accounts/admission.js";
import { Limiter } from "../src/accounts/limits.js";
import { openSqliteStore } from "../src/accounts/sqlite-store.js";
import { createKey } from "../src/accounts/keys.js";
import type { EngineHandle } from "../src/api/flow.js";
import { ROUTES } from "../src/api/routes.js";
import { createEngine } from "../src/engine/registry.js";
import { startServer, type RunningServer } from "../src/http/server.js";
import { post, startService, tempDir, type Service } from "./helpers/service.js";
import { maximalRequest } from "./helpers/pressure.js";
import { join } from "node:path";
import { AnswerCache } from "../src/api/answer-cache.js";

const body = { model: "svc-latest", state: "Where is my parcel?", questions: { q: { type: "noul", instructions: "Is this about shipping?" } } };

describe("503 while the model is not available", () => {
  let server: RunningServer;
  let handle: EngineHandle;
  let key: string;
  before(async () => {
    const store = openSqliteStore(join(tempDir(), "svc.sqlite"));
    key = (await createKey(store, "t", { perMinute: null, perDay: null, monthlyTokens: null })).key;
    handle = { engine: createEngine({ workers: 1 }), state: "loading" };
    server = await startServer(ROUTES, { engine: handle, store, limiter: new Limiter(store, { perMinute: null, perDay: null, monthlyTokens: null }), admission: new Admission({ perKey: 0, total: 0 }), cache: new AnswerCache({ windowMs: 0, entries: 0, shared: null }), bodyTimeoutMs: 5000, log: "off" }, "127.0.0.1", 0);
  });
  after(async () => {
    await server.shutdown(1000);
    await handle.engine.close();
  });

  test("loading: 503 with Retry-After, health still answers and says so", async () => {
    const r = await post({ url: server.url, key }, "/v1/systemone", body);
    assert.equal(r.status, 503);
    assert.equal(r.headers.get("retry-after"), "5");
    assert.deepEqual(r.body, { error: { type: "service_unavailable_error", message: "The model is loading; retry in a few seconds." }, detail: [] });
    const h = await fetch(`${server.url}/healthz`);
    assert.deepEqual(await h.json(), { status: "ok", model: "loading" });
    // validation still runs first: a bad request is 422, not 503
    assert.equal((await post({ url: server.url, key }, "/v1/systemone", { ...body, questions: {} })).status, 422);
  });

  test("failed: 503 with a longer Retry-After", async () => {
    handle.state = "failed";
    const r = await post({ url: server.url, key }, "/v1/systemone", body);
    assert.equal(r.status, 503);
    assert.equal(r.headers.get("retry-after"), "30");
    assert.equal(r.body.error.message, "The model could not be loaded on this server; retry later.");
    handle.state = "loading";
  });
});

describe("the event loop stays free while the model works", () => {
  let svc: Service;
  before(async () => {
    svc = await startService();
  });
  after(async () => {
    await svc.stop();
  });

  test("/healthz answers in milliseconds while a 64-question request is scored", async () => {
    const questions = Object.fromEntries(
      Array.from({ length: 64 }, (_, i) => [`q${i}`, { type: "choice", instructions: `Question number ${i}: which department?`, criteria: { sales: `sales ${i}`, support: `support ${i}`, billing: `billing ${i}`, legal: `legal ${i}` } }]),
    );
    let done = false;
    const heavy = post(svc, "/v1/systemone", { model: "svc-latest", state: "A long customer message about an invoice that was wrong. ".repeat(8), questions }).then((r) => {
      done = true;
      return r;
    });
    const latencies: number[] = [];
    await new Promise((r) => setTimeout(r, 50));
    while (!done) {
      const t0 = performance.now();
      const h = await fetch(`${svc.url}/healthz`);
      await h.arrayBuffer();
      latencies.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 10));
    }
    const r = await heavy;
    assert.equal(r.status, 200);
    assert.equal(Object.keys(r.body.answers).length, 64);
    assert.ok(latencies.length >= 3, `only ${latencies.length} health checks ran during the request`);
    latencies.sort((a, b) => a - b);
    const worst = latencies[latencies.length - 1];
    assert.ok(worst < 100, `slowest /healthz during inference: ${worst.toFixed(1)} ms (${latencies.length} checks)`);
  });

  test("SIGTERM lets in-flight requests finish, then the process exits 0", async () => {
    // 512 pairs the model has not seen: seconds of work on 2 cores, so it is surely still running at SIGTERM.
    let answeredAt = 0;
    const inflight = post(svc, "/v1/systemone", maximalRequest(Date.now() % 100_000, { questions: 8, options: 64 })).then((r) => {
      answeredAt = performance.now();
      return r;
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(answeredAt, 0, "the request was answered before SIGTERM: nothing was in flight");
    const signalledAt = performance.now();
    const code = await svc.stop("SIGTERM");
    const r = await inflight;
    assert.equal(r.status, 200);
    assert.equal(Object.keys(r.body.answers).length, 8);
    assert.ok(answeredAt > signalledAt);
    assert.equal(code, 0);
    assert.match(svc.output(), /SIGTERM: finishing in-flight requests\nstopped\n/);
  });
});
