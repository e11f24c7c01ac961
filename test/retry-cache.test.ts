import { test } from "node:test";
import assert from "node:assert/strict";
import { cli, newKey, post, startService, tempDir, type Service } from "./helpers/service.js";
import { createScratch } from "./helpers/shared-state.js";

// A retry is billed once: identical requests (or the same Idempotency-Key) within the window are replayed
// from the cache with exactly the same numbers, marked `x-svc-cache: hit`, and recorded as cached with 0 tokens.

const body = (n: number) => ({
  model: "svc-latest",
  state: `Ticket ${n}: I was charged twice for my plan this month and the app logs me out every hour.`,
  questions: {
    topic: { type: "choice", instructions: "What is this about?", criteria: Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`topic_${i}`, `a kind of request number ${i}`])) },
    refund: { type: "noul", instructions: "Does the customer want money back?" },
  },
});

type Usage = { requests: number; cached_requests: number; input_tokens: number };

async function usage(svc: Service, env: Record<string, string> = {}): Promise<Usage> {
  const r = await cli(["usage", "--json"], { SVC_DATA_DIR: svc.dataDir, ...env });
  assert.equal(r.code, 0, r.stderr);
  const keys = (JSON.parse(r.stdout) as { keys: Usage[] }).keys;
  return keys.reduce((s, k) => ({ requests: s.requests + k.requests, cached_requests: s.cached_requests + k.cached_requests, input_tokens: s.input_tokens + k.input_tokens }), { requests: 0, cached_requests: 0, input_tokens: 0 });
}

test("an identical request is replayed with the same numbers, marked, billed 0 tokens and listed apart by svc usage", async () => {
  const svc = await startService();
  try {
    const first = await post(svc, "/v1/systemone", body(1));
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("x-svc-cache"), "miss");
    const again = await post(svc, "/v1/systemone", body(1));
    assert.equal(again.status, 200);
    assert.equal(again.headers.get("x-svc-cache"), "hit");
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers.get("x-model-hash"), first.headers.get("x-model-hash"));
    assert.equal(again.headers.get("x-state-truncated"), "false");
    assert.notEqual(again.headers.get("x-request-id"), first.headers.get("x-request-id"));
    // /v1/decide: the replay carries its own request id, the numbers are the first answer's.
    const d = { model: "svc-latest", state: "The parcel never arrived.", questions: { late: { type: "binary", question: "Is the parcel missing?" } } };
    const d1 = await post(svc, "/v1/decide", d);
    const d2 = await post(svc, "/v1/decide", d);
    assert.equal(d2.headers.get("x-svc-cache"), "hit");
    const { id: id1, ...rest1 } = d1.body as { id: string };
    const { id: id2, ...rest2 } = d2.body as { id: string };
    assert.deepEqual(rest2, rest1);
    assert.equal(id2, d2.headers.get("x-request-id"));
    assert.notEqual(id2, id1);
    const tokens = (first.body as { usage: { input_tokens: number } }).usage.input_tokens + (d1.body as { usage: { input_tokens: number } }).usage.input_tokens;
    assert.deepEqual(await usage(svc), { requests: 2, cached_requests: 2, input_tokens: tokens });
    const text = await cli(["usage"], { SVC_DATA_DIR: svc.dataDir });
    assert.match(text.stdout, /requests +cached +input_tokens\n/);
    assert.match(text.stdout, new RegExp(` +2 +2 +${tokens}\\n`));
  } finally {
    await svc.stop();
  }
});

test("a client that times out and retries is billed once", async () => {
  const svc = await startService();
  try {
    // The first attempt gives up before its answer: the server drops it unbilled, or answers and caches it.
    const gaveUp = await fetch(`${svc.url}/v1/systemone`, {
      method: "POST",
      headers: { authorization: `Bearer ${svc.key}`, "content-type": "application/json" },
      body: JSON.stringify(body(2)),
      signal: AbortSignal.timeout(15),
    }).catch((err: Error) => err);
    assert.ok(gaveUp instanceof Error, "the first attempt timed out");
    const retry = await post(svc, "/v1/systemone", body(2));
    assert.equal(retry.status, 200);
    const retry2 = await post(svc, "/v1/systemone", body(2));
    assert.equal(retry2.headers.get("x-svc-cache"), "hit");
    await new Promise((r) => setTimeout(r, 300));
    const u = await usage(svc);
    assert.equal(u.requests, 1, JSON.stringify(u));
    assert.equal(u.input_tokens, (retry.body as { usage: { input_tokens: number } }).usage.input_tokens);
  } finally {
    await svc.stop();
  }
});

test("Idempotency-Key: the same key and body is a replay, the same key with another body is refused (422)", async () => {
  const svc = await startService({ env: { SVC_CACHE_WINDOW_MS: "0" } });
  try {
    const h = { "idempotency-key": "order-7781-try" };
    const a = await post(svc, "/v1/systemone", body(3), h);
    assert.equal(a.headers.get("x-svc-cache"), "miss");
    const b = await post(svc, "/v1/systemone", body(3), h);
    assert.equal(b.headers.get("x-svc-cache"), "hit");
    assert.deepEqual(b.body, a.body);
    const c = await post(svc, "/v1/systemone", body(4), h);
    assert.equal(c.status, 422);
    assert.equal((c.body as { error: { message: string } }).error.message, "This Idempotency-Key was already used with a different request body; use a new key for a new request.");
    const de = await post(svc, "/v1/systemone", body(4), { ...h, "accept-language": "de" });
    assert.match((de.body as { error: { message: string } }).error.message, /^Dieser Idempotency-Key wurde bereits/);
    const empty = await post(svc, "/v1/systemone", body(4), { "idempotency-key": "x".repeat(256) });
    assert.equal(empty.status, 422);
    // Without the header, the window of 0 turns replays off: the same body runs and is billed again.
    const n1 = await post(svc, "/v1/systemone", body(5));
    const n2 = await post(svc, "/v1/systemone", body(5));
    assert.deepEqual([n1.headers.get("x-svc-cache"), n2.headers.get("x-svc-cache")], ["miss", "miss"]);
    const u = await usage(svc);
    assert.deepEqual([u.requests, u.cached_requests], [3, 1]);
  } finally {
    await svc.stop();
  }
});

test("the memory cache is bounded: past SVC_CACHE_ENTRIES the oldest answer is no longer replayed", async () => {
  const svc = await startService({ env: { SVC_CACHE_ENTRIES: "1" } });
  try {
    const hits = [];
    for (const n of [6, 7, 6]) hits.push((await post(svc, "/v1/systemone", body(n))).headers.get("x-svc-cache"));
    assert.deepEqual(hits, ["miss", "miss", "miss"]);
    assert.equal((await post(svc, "/v1/systemone", body(6))).headers.get("x-svc-cache"), "hit");
  } finally {
    await svc.stop();
  }
});

test("across two instances on PostgreSQL and Redis, a retry that lands on the other instance is a replay, billed once", async () => {
  const scratch = await createScratch("retry");
  const key = newKey();
  const env = { SVC_DATABASE_URL: scratch.databaseUrl(), SVC_REDIS_URL: "redis://127.0.0.1:6379", SVC_REDIS_PREFIX: scratch.redisPrefix };
  const svcs: Service[] = [];
  try {
    for (let i = 0; i < 2; i++) svcs.push(await startService({ key, env: { ...env, SVC_DATA_DIR: tempDir() } }));
    const a = await post(svcs[0], "/v1/systemone", body(8));
    assert.equal(a.headers.get("x-svc-cache"), "miss");
    const b = await post(svcs[1], "/v1/systemone", body(8));
    assert.equal(b.headers.get("x-svc-cache"), "hit");
    assert.deepEqual(b.body, a.body);
    const rows = (await scratch.db.query("SELECT input_tokens, cached FROM usage ORDER BY at")).rows as { input_tokens: string; cached: number }[];
    assert.deepEqual(rows.map((r) => [Number(r.input_tokens), r.cached]), [[(a.body as { usage: { input_tokens: number } }).usage.input_tokens, 0], [0, 1]]);
  } finally {
    await Promise.all(svcs.map((s) => s.stop()));
    await scratch.drop();
  }
});
