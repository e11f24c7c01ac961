import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cli, startService, type Service } from "./helpers/service.js";
import { cpuSeconds, fire, maximalRequest, probeElsewhere, rssSampler, smallRequest, tally, type Fired } from "./helpers/pressure.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A second key, with no per-minute limit, created with the real CLI. */
async function secondKey(svc: Service, name: string): Promise<string> {
  const r = await cli(["keys", "create", "--name", name, "--per-minute", "0"], { SVC_DATA_DIR: svc.dataDir });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim().split("\n").pop()!;
}

/** Requests billed to a key prefix this month, from `svc usage --json`. */
async function billed(svc: Service, key: string): Promise<number> {
  const prefix = key.split("_")[1];
  const r = await cli(["usage", "--json"], { SVC_DATA_DIR: svc.dataDir });
  assert.equal(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout).keys as { prefix: string; requests: number }[];
  return rows.find((k) => k.prefix === prefix)?.requests ?? 0;
}

/** Request-log lines of requests whose client left before the answer (logged 499). */
const abandoned = (svc: Service): number => (svc.output().match(/ POST \/v1\/systemone 499 /g) ?? []).length;

/** Waits until the server has logged `count` abandoned requests. */
async function loggedAbandoned(svc: Service, count: number, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if (abandoned(svc) >= count) return true;
    await sleep(20);
  }
  return false;
}

const post = (svc: Service, key: string, body: object, signal?: AbortSignal): Promise<Fired> =>
  fire(`${svc.url}/v1/systemone`, key, body, { timeoutMs: 120_000, signal });

/** 12,288 fresh pairs: half a minute or more of model work on 2 cores, so it is surely still running while a test looks. */
const bigRequest = (seed: number): object => maximalRequest(seed);

describe("one key cannot crash or starve the service (default bounds)", () => {
  let svc: Service;
  let keyB: string;
  before(async () => {
    svc = await startService({ env: { SVC_PER_MINUTE: "0", SVC_LOG: "on" } });
    keyB = await secondKey(svc, "b");
  });
  after(async () => {
    await svc.stop();
  });

  test("100 concurrent maximal requests from one key: one admitted, 99 refused 429 concurrency at once; memory and /healthz stay bounded", async () => {
    const pid = svc.proc.pid!;
    // Built before the probes start: building them blocks this process (~1 s), which would show as server latency.
    const bodies = Array.from({ length: 100 }, (_, i) => JSON.stringify(maximalRequest(1000 + i)));
    const rss = rssSampler(pid, 20);
    const health = probeElsewhere(svc.url, 10);
    await sleep(300);
    const stopAdmitted = new AbortController();
    const t0 = performance.now();
    const outcomes: Fired[] = [];
    const all = bodies.map((b) =>
      fire(`${svc.url}/v1/systemone`, svc.key, b, { timeoutMs: 60_000, signal: stopAdmitted.signal }).then((f) => {
        outcomes.push(f);
        return f;
      }),
    );
    while (outcomes.length < 99 && performance.now() - t0 < 30_000) await sleep(20);
    const refusedIn = performance.now() - t0;
    await sleep(1000);
    const health1 = await health.stop();
    const mem = rss.stop();
    stopAdmitted.abort();
    await Promise.all(all);
    assert.deepEqual(tally(outcomes.slice(0, 99)), { "429 concurrency": 99 });
    assert.equal(outcomes[99].error, "aborted", "the admitted request was still running when its client left");
    assert.ok(refusedIn < 10_000, `refusals took ${refusedIn.toFixed(0)} ms`);
    const refusal = outcomes[0];
    const retry = Number(refusal.headers["retry-after"]);
    assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${refusal.headers["retry-after"]}`);
    const err = (refusal.body as { error: Record<string, unknown>; detail: unknown[] }).error;
    assert.equal(err.type, "rate_limit_error");
    assert.equal(err.limit, "concurrency");
    assert.match(String(err.message), /^This key already has 12288 question-option pairs in flight or waiting, and this request adds 12288; at most 16384 are allowed at once\. Retry in \d+ s\.$/);
    assert.deepEqual((refusal.body as { detail: unknown[] }).detail, []);
    // One maximal request is ~12,000 pairs of features in memory; 100 of them admitted took 8 GB.
    assert.ok(mem.peakRssMb - mem.hwmStartMb < 600 || mem.hwmEndMb - mem.hwmStartMb < 600, `server RSS grew ${(mem.peakRssMb - mem.hwmStartMb).toFixed(0)} MB`);
    assert.ok(health1.max < 500 && health1.p99 < 250, `/healthz p99 ${health1.p99.toFixed(1)} ms, max ${health1.max.toFixed(1)} ms`);
    assert.equal(health1.failures, 0);
    assert.ok(await loggedAbandoned(svc, 1, 3000), "the abandoned request is logged 499");
    assert.equal(await billed(svc, svc.key), 0, "an abandoned request is not billed");
  });

  test("fair turns: another key's small requests are answered in about a second while one key's big request runs", async () => {
    const stopBig = new AbortController();
    const big = post(svc, svc.key, bigRequest(1), stopBig.signal);
    await sleep(500);
    const small: Fired[] = [];
    for (let i = 0; i < 5; i++) small.push(await post(svc, keyB, smallRequest(2000 + i)));
    const stillRunning = await Promise.race([big.then(() => false), sleep(0).then(() => true)]);
    stopBig.abort();
    await big;
    assert.deepEqual(tally(small), { "200": 5 });
    const worst = Math.max(...small.map((f) => f.ms));
    // In arrival order each would wait for the whole big request (tens of seconds).
    assert.ok(worst < 3000, `small requests took ${small.map((f) => f.ms.toFixed(0)).join(", ")} ms`);
    assert.ok(stillRunning, "the big request was still running after the small ones were answered");
    assert.equal(await billed(svc, keyB), 5);
  });

  test("a client that disconnects: its queued work is dropped at once (CPU goes idle), logged 499, not billed", async () => {
    const pid = svc.proc.pid!;
    const before = await billed(svc, svc.key);
    const leave = new AbortController();
    const big = post(svc, svc.key, bigRequest(2), leave.signal);
    // The request takes about 2.4 s here (its options were read by the requests before: only its questions are
    // new), so the client leaves at 1.3 s, while it runs.
    await sleep(300);
    const busy0 = cpuSeconds(pid)!;
    await sleep(1000);
    const busy = cpuSeconds(pid)! - busy0;
    const lines = abandoned(svc);
    leave.abort();
    assert.equal((await big).error, "aborted");
    assert.ok(await loggedAbandoned(svc, lines + 1, 3000), "logged 499");
    // Batches already in the workers finish; then nothing is left to run.
    await sleep(500);
    const idle0 = cpuSeconds(pid)!;
    await sleep(1500);
    const idle = cpuSeconds(pid)! - idle0;
    assert.ok(busy > 0.4, `the big request kept the workers busy (${busy.toFixed(2)} CPU-s in 1 s)`);
    assert.ok(idle < 0.25, `${idle.toFixed(2)} CPU-s used in 1.5 s after the client left`);
    assert.equal(await billed(svc, svc.key), before);
  });
});

describe("past the server's own capacity: 503 with Retry-After", () => {
  let svc: Service;
  let keyB: string;
  before(async () => {
    svc = await startService({ env: { SVC_PER_MINUTE: "0", SVC_MAX_PAIRS: "3000", SVC_MAX_PAIRS_PER_KEY: "0" } });
    keyB = await secondKey(svc, "b");
  });
  after(async () => {
    await svc.stop();
  });

  test("2,400 pairs held: 1,000 more are refused 503 service_unavailable_error, 4 more are answered", async () => {
    const stopBig = new AbortController();
    // 2,400 pairs: under the server's 3,000.
    const big = post(svc, svc.key, maximalRequest(3, { questions: 24, options: 100 }), stopBig.signal);
    await sleep(500);
    const refused = await post(svc, keyB, maximalRequest(4, { questions: 10, options: 100 }));
    const small = await post(svc, keyB, smallRequest(3000));
    stopBig.abort();
    await big;
    assert.equal(refused.status, 503);
    assert.deepEqual(refused.body, {
      error: { type: "service_unavailable_error", message: `The server is at capacity; retry in ${refused.headers["retry-after"]} s.` },
      detail: [],
    });
    const retry = Number(refused.headers["retry-after"]);
    assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60);
    assert.equal(small.status, 200);
  });
});
