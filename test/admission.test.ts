import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Admission } from "../src/accounts/admission.js";
import { ApiError } from "../src/http/errors.js";
import { Lanes } from "../src/engine/lanes.js";

/** The ApiError thrown by fn. */
function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return err;
  }
  assert.fail("not refused");
}

describe("admission control in pairs", () => {
  test("a key past its share gets 429 concurrency; the server past its own gets 503; releases are idempotent", () => {
    const a = new Admission({ perKey: 100, total: 150 });
    const releaseA = a.admit("a", 80);
    const e = refusal(() => a.admit("a", 30));
    assert.equal(e.status, 429);
    assert.deepEqual(e.toBody("en"), {
      error: {
        type: "rate_limit_error",
        message: "This key already has 80 question-option pairs in flight or waiting, and this request adds 30; at most 100 are allowed at once. Retry in 1 s.",
        limit: "concurrency",
      },
      detail: [],
    });
    assert.deepEqual(e.headers, { "retry-after": "1" });
    a.admit("a", 20);
    assert.equal(a.held("a"), 100);
    const full = refusal(() => a.admit("b", 51));
    assert.equal(full.status, 503);
    assert.deepEqual(full.toBody("en"), { error: { type: "service_unavailable_error", message: "The server is at capacity; retry in 1 s." }, detail: [] });
    const releaseB = a.admit("b", 50);
    assert.equal(a.held(), 150);
    releaseA();
    releaseA();
    assert.equal(a.held("a"), 20);
    assert.equal(a.held(), 70);
    releaseB();
    assert.equal(a.held("b"), 0);
  });

  test("a key or server holding nothing admits one request of any size, so every valid request can run alone", () => {
    const a = new Admission({ perKey: 10, total: 20 });
    const big = a.admit("a", 16_320);
    assert.equal(refusal(() => a.admit("a", 1)).status, 429);
    assert.equal(refusal(() => a.admit("b", 1)).status, 503);
    big();
    a.admit("b", 16_320);
    assert.equal(a.held(), 16_320);
  });

  test("0 means no bound", () => {
    const a = new Admission({ perKey: 0, total: 0 });
    for (let i = 0; i < 10; i++) a.admit("a", 100_000);
    assert.equal(a.held("a"), 1_000_000);
  });

  test("Retry-After is the excess over the pairs drained per second in the last 10 s (300/s before any)", () => {
    let now = 5_000_000;
    const a = new Admission({ perKey: 1000, total: 0 }, () => now);
    const first = a.admit("a", 1000);
    // Nothing drained yet: 1,000 held + 1,000 asked - 1,000 allowed = 1,000 pairs at 300/s.
    assert.equal(refusal(() => a.admit("a", 1000)).headers["retry-after"], "4");
    first();
    now += 2000;
    a.admit("a", 1000);
    // 1,000 drained, 2 s ago: 500/s; 1,999 excess -> 4 s.
    assert.equal(refusal(() => a.admit("a", 1999)).headers["retry-after"], "4");
    // A minute at most, a second at least.
    assert.equal(refusal(() => a.admit("a", 1_000_000)).headers["retry-after"], "60");
    assert.equal(refusal(() => a.admit("a", 1)).headers["retry-after"], "1");
    now += 20_000;
    // Older than 10 s: forgotten, back to 300/s.
    assert.equal(refusal(() => a.admit("a", 1000)).headers["retry-after"], "4");
  });
});

describe("lanes", () => {
  test("lanes take turns one take at a time; within a lane order is kept", () => {
    const l = new Lanes<string>();
    for (const x of ["a1", "a2", "a3"]) l.push("a", x);
    l.push("b", "b1");
    const served: string[] = [];
    for (let turn = l.peek(); turn !== null; turn = l.peek()) {
      served.push(turn.queue.shift()!);
      l.served(turn.lane, 1);
    }
    assert.deepEqual(served, ["a1", "b1", "a2", "a3"]);
    assert.equal(l.size, 0);
  });

  test("remove() takes out what matches and keeps the turn order; clear() empties", () => {
    const l = new Lanes<number>();
    [1, 2, 3].forEach((n) => l.push("a", n));
    [4, 5].forEach((n) => l.push("b", n));
    l.push("c", 6);
    assert.deepEqual(l.remove((n) => n % 2 === 0), [2, 4, 6]);
    assert.equal(l.size, 3);
    assert.deepEqual(l.peek(), { lane: "a", queue: [1, 3] });
    assert.deepEqual(l.clear().sort(), [1, 3, 5]);
    assert.equal(l.peek(), null);
  });
});
