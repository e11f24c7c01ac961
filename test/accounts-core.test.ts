import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { authenticate, createKey, hashKey, keyPrefix, makeKeyString } from "../src/accounts/keys.js";
import { Limiter, monthBounds } from "../src/accounts/limits.js";
import { openPgStore } from "../src/accounts/pg-store.js";
import { openSqliteStore } from "../src/accounts/sqlite-store.js";
import type { AccountStore, KeyLimits, KeyRecord } from "../src/accounts/store.js";
import { ApiError } from "../src/http/errors.js";
import { tempDir } from "./helpers/service.js";
import { createScratch, type Scratch } from "./helpers/shared-state.js";

/*
 * Keys and limits in this process, on a real SQLite file, with the clock set by the test: the exact
 * numbers of every refusal (status, error.limit, Retry-After, message), which the HTTP tests
 * (accounts.test.ts) can only bracket by the time a request took.
 */
const store = openSqliteStore(join(tempDir(), "svc.sqlite"));
after(() => store.close());

const UNLIMITED: KeyLimits = { perMinute: null, perDay: null, monthlyTokens: null };
/** 2026-01-15 10:30:12.250 UTC: 47.75 s left in the minute, 48,587.75 s in the day, 1,430,987.75 s in the month. */
const T = Date.UTC(2026, 0, 15, 10, 30, 12, 250);

let n = 0;
async function newKey(limits: Partial<KeyLimits> = {}): Promise<KeyRecord> {
  return (await createKey(store, `k${++n}`, { ...UNLIMITED, ...limits })).record;
}

/** The ApiError thrown by fn, as the wire sees it. */
function refusal(fn: () => unknown): { status: number; headers: Record<string, string>; body: ReturnType<ApiError["toBody"]> } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    return { status: err.status, headers: err.headers, body: err.toBody("en") };
  }
  assert.fail("not refused");
}

function rateLimited(message: string, extra: Record<string, string>, retry: number) {
  return { status: 429, headers: { "retry-after": String(retry) }, body: { error: { type: "rate_limit_error", message, ...extra }, detail: [] } };
}

describe("keys", () => {
  test("a key is svc_<8 hex>_<secret>; its prefix is the 8 hex; only sha256 is kept", async () => {
    const k = makeKeyString();
    assert.match(k, /^svc_[0-9a-f]{8}_[A-Za-z0-9_-]{43}$/);
    assert.equal(keyPrefix(k), k.slice(4, 12));
    for (const bad of ["svc_1234567_abcdefghijklmnop", "svc_1234567g_abcdefghijklmnop", "svc_12345678_short", "xsvc_12345678_abcdefghijklmnop", `svc_12345678_${"a".repeat(129)}`, "svc_12345678_abcdefghijklmno!"]) {
      assert.equal(keyPrefix(bad), null, bad);
    }
    assert.equal(keyPrefix(`svc_12345678_${"a".repeat(16)}`), "12345678");
    assert.equal(keyPrefix(`svc_12345678_${"a".repeat(128)}`), "12345678");
    assert.equal(hashKey("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const { key, record } = await createKey(store, "named", { perMinute: 7, perDay: null, monthlyTokens: 0 });
    assert.deepEqual(
      { ...record, id: record.id.replace(/[0-9a-f]{16}$/, "x"), createdAt: typeof record.createdAt },
      { id: "key_x", name: "named", prefix: keyPrefix(key), hash: hashKey(key), createdAt: "string", revokedAt: null, perMinute: 7, perDay: null, monthlyTokens: 0 },
    );
    assert.match(record.id, /^key_[0-9a-f]{16}$/);
    assert.ok(Math.abs(Date.parse(record.createdAt) - Date.now()) < 5000);
    assert.deepEqual(store.findByPrefix(record.prefix), record);
    await assert.rejects(createKey(store, "same prefix", UNLIMITED, `${key.slice(0, 13)}${"B".repeat(20)}`), new Error(`a key with prefix ${record.prefix} already exists`));
    await assert.rejects(createKey(store, "malformed", UNLIMITED, "svc_nothex_abcdefghijklmnop"), /a key must look like svc_<8 hex>_/);
  });

  test("authenticate: the right key gives its record; a wrong secret, an unknown prefix, a malformed or revoked key give null", async () => {
    const { key, record } = await createKey(store, "auth", UNLIMITED);
    assert.deepEqual(authenticate(store, key), record);
    assert.equal(authenticate(store, `${key.slice(0, 13)}${"A".repeat(key.length - 13)}`), null);
    assert.equal(authenticate(store, `svc_00000000_${key.slice(13)}`), null);
    assert.equal(authenticate(store, key.slice(4)), null);
    assert.equal(authenticate(store, ""), null);
    store.revokeKey(record.prefix);
    assert.equal(authenticate(store, key), null);
  });

  test("the presented key's hash is compared with crypto.timingSafeEqual, for the right and a wrong secret alike", async () => {
    // Timing itself cannot be measured here (the compared values are sha256 hashes, and a test
    // machine's noise dwarfs a 64-byte comparison), so this pins the constant-time function: node's
    // own, watched by a wrapper that calls it, put in place for the module's import by
    // syncBuiltinESMExports.
    const { key, record } = await createKey(store, "t", UNLIMITED);
    const real = crypto.timingSafeEqual;
    const compared: number[][] = [];
    crypto.timingSafeEqual = (a, b) => {
      compared.push([a.byteLength, b.byteLength]);
      return real(a, b);
    };
    syncBuiltinESMExports();
    try {
      assert.deepEqual(authenticate(store, key), record);
      assert.equal(authenticate(store, `${key.slice(0, 13)}${"A".repeat(key.length - 13)}`), null);
    } finally {
      crypto.timingSafeEqual = real;
      syncBuiltinESMExports();
    }
    assert.deepEqual(compared, [[64, 64], [64, 64]]);
  });
});

describe("limits per minute and per day", () => {
  test("N per minute admits exactly N; then 429 per_minute with the whole seconds left; the next minute admits again", async () => {
    let now = T;
    const limiter = new Limiter(store, { perMinute: 3, perDay: null, monthlyTokens: null }, () => now);
    const key = await newKey();
    for (let i = 0; i < 3; i++) limiter.admit(key);
    assert.deepEqual(refusal(() => limiter.admit(key)), rateLimited("Rate limit reached: 3 requests per minute. Retry in 48 s.", { limit: "per_minute" }, 48));
    now = T + 47_749;
    assert.equal(refusal(() => limiter.admit(key)).headers["retry-after"], "1");
    now = T + 47_750;
    for (let i = 0; i < 3; i++) limiter.admit(key);
    assert.equal(refusal(() => limiter.admit(key)).headers["retry-after"], "60");
    // Another key has its own count.
    limiter.admit(await newKey());
  });

  test("the day is checked before the minute, each with its own window; a key's own limit replaces the default as key_limit", async () => {
    let now = T;
    const limiter = new Limiter(store, { perMinute: 1, perDay: 2, monthlyTokens: null }, () => now);
    const key = await newKey();
    limiter.admit(key);
    now += 60_000;
    limiter.admit(key);
    assert.deepEqual(refusal(() => limiter.admit(key)), rateLimited("Daily limit reached: 2 requests per day. Retry in 48528 s.", { limit: "per_day" }, 48528));
    // Its own limits: 2 per minute, unlimited per day (0).
    const own = await newKey({ perMinute: 2, perDay: 0 });
    for (let i = 0; i < 2; i++) limiter.admit(own);
    assert.deepEqual(
      refusal(() => limiter.admit(own)),
      rateLimited("This key's own limit is reached (per_minute: 2). Retry in 48 s.", { limit: "key_limit", window: "per_minute" }, 48),
    );
    const ownDay = await newKey({ perDay: 1 });
    limiter.admit(ownDay);
    assert.deepEqual(
      refusal(() => limiter.admit(ownDay)),
      rateLimited("This key's own limit is reached (per_day: 1). Retry in 48528 s.", { limit: "key_limit", window: "per_day" }, 48528),
    );
    // No limit anywhere (null or 0): always admitted.
    const free = new Limiter(store, { perMinute: 0, perDay: null, monthlyTokens: null }, () => now);
    for (let i = 0; i < 50; i++) free.admit(key);
  });

  test("refund gives back a place in the current minute and day, never below zero", async () => {
    let now = T;
    const limiter = new Limiter(store, { perMinute: 1, perDay: 3, monthlyTokens: null }, () => now);
    const key = await newKey();
    limiter.admit(key);
    limiter.refund(key);
    limiter.refund(key);
    limiter.admit(key);
    assert.equal(refusal(() => limiter.admit(key)).body.error.limit, "per_minute");
    // In a later minute a refund leaves that minute alone and gives back the day's place: 3 more today.
    now += 60_000;
    limiter.refund(key);
    for (let i = 0; i < 3; i++) {
      limiter.admit(key);
      now += 60_000;
    }
    assert.equal(refusal(() => limiter.admit(key)).body.error.limit, "per_day");
    // A key never seen: nothing to give back.
    limiter.refund(await newKey());
  });

  test("after a restart the day's count starts from the requests billed that day (not the day before)", async () => {
    const key = await newKey();
    const dayStart = Date.UTC(2026, 0, 15);
    for (const at of [dayStart - 1, dayStart, T - 5000, T]) {
      await store.recordUsage({ keyId: key.id, requestId: `req_${key.id}_${at}`, endpoint: "/v1/systemone", model: "svc-1.6.0", inputTokens: 10, at });
    }
    const limiter = new Limiter(store, { perMinute: null, perDay: 4, monthlyTokens: null }, () => T);
    limiter.admit(key);
    assert.equal(refusal(() => limiter.admit(key)).body.error.limit, "per_day");
    // The next day starts from zero.
    const tomorrow = new Limiter(store, { perMinute: null, perDay: 1, monthlyTokens: null }, () => dayStart + 86_400_000);
    tomorrow.admit(key);
  });
});

describe("monthly token quota", () => {
  test("reserve holds tokens while a request runs; settle bills them or gives them back", async () => {
    let now = T;
    const limiter = new Limiter(store, { perMinute: null, perDay: null, monthlyTokens: 100 }, () => now);
    const key = await newKey();
    limiter.reserve(key, 60);
    const r = refusal(() => limiter.reserve(key, 41));
    assert.deepEqual(r, rateLimited("Monthly quota reached: 100 input tokens per month, 60 used, this request needs 41. Retry in 1430988 s.", { limit: "monthly_quota" }, 1430988));
    limiter.reserve(key, 40);
    limiter.settle(key, 40, false);
    limiter.settle(key, 60, true);
    limiter.reserve(key, 40);
    assert.match(String(refusal(() => limiter.reserve(key, 1)).body.error.message), /, 100 used, this request needs 1\./);
    limiter.settle(key, 40, false);
    // A settle for a key never seen changes nothing and does not throw.
    limiter.settle(await newKey(), 10, true);
    // The next month starts from what the ledger holds for it, even though this process has state
    // for the month before: here 30 tokens billed on 1 February by another instance on the same file.
    await store.recordUsage({ keyId: key.id, requestId: `req_${key.id}_feb`, endpoint: "/v1/systemone", model: "svc-1.6.0", inputTokens: 30, at: Date.UTC(2026, 1, 1) });
    now = Date.UTC(2026, 1, 1, 0, 0, 1);
    assert.match(String(refusal(() => limiter.reserve(key, 71)).body.error.message), /^Monthly quota reached: 100 input tokens per month, 30 used, this request needs 71\./);
    limiter.reserve(key, 70);
  });

  test("the month starts from the tokens billed in it; a key's own quota is key_limit; one request over the whole quota is 413", async () => {
    const key = await newKey({ monthlyTokens: 50 });
    for (const [at, tokens] of [[Date.UTC(2025, 11, 31, 23, 59, 59, 999), 1000], [Date.UTC(2026, 0, 1), 20], [T, 10]]) {
      await store.recordUsage({ keyId: key.id, requestId: `req_${key.id}_${at}`, endpoint: "/v1/decide", model: "svc-1.6.0", inputTokens: tokens, at });
    }
    const limiter = new Limiter(store, { perMinute: null, perDay: null, monthlyTokens: 1_000_000 }, () => T);
    assert.deepEqual(
      refusal(() => limiter.reserve(key, 21)),
      rateLimited("This key's own limit is reached (monthly_quota: 50). Retry in 1430988 s.", { limit: "key_limit", window: "monthly_quota" }, 1430988),
    );
    limiter.reserve(key, 20);
    assert.deepEqual(refusal(() => limiter.reserve(key, 51)), {
      status: 413,
      headers: {},
      body: {
        error: {
          type: "request_too_large",
          message: "This request alone needs 51 input tokens, more than this key's whole monthly quota of 50: it cannot be answered under this quota, now or later. Send fewer or shorter questions, options or state, or raise the quota.",
          limit: "key_limit",
          window: "monthly_quota",
        },
        detail: [],
      },
    });
    const byDefault = new Limiter(store, { perMinute: null, perDay: null, monthlyTokens: 30 }, () => T);
    const other = await newKey();
    byDefault.reserve(other, 30);
    assert.deepEqual(refusal(() => byDefault.reserve(other, 31)).body.error, {
      type: "request_too_large",
      message: "This request alone needs 31 input tokens, more than this key's whole monthly quota of 30: it cannot be answered under this quota, now or later. Send fewer or shorter questions, options or state, or raise the quota.",
      limit: "monthly_quota",
    });
    // No quota (0): anything fits.
    new Limiter(store, UNLIMITED, () => T).reserve(other, 10_000_000);
  });

  test("monthBounds: the UTC calendar month around a time, across a year's end", () => {
    assert.deepEqual(monthBounds(T), { start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 1, 1) });
    assert.deepEqual(monthBounds(Date.UTC(2025, 11, 31, 23, 59, 59, 999)), { start: Date.UTC(2025, 11, 1), end: Date.UTC(2026, 0, 1) });
    assert.deepEqual(monthBounds(Date.UTC(2026, 0, 1)), { start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 1, 1) });
    assert.deepEqual(monthBounds(Date.UTC(2026, 1, 1) - 1), { start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 1, 1) });
    assert.deepEqual(monthBounds(Date.UTC(2026, 1, 1)), { start: Date.UTC(2026, 1, 1), end: Date.UTC(2026, 2, 1) });
  });
});

describe("with a store that answers with promises (PostgreSQL, as test/scale.test.ts)", () => {
  let scratch: Scratch;
  let pgStore: AccountStore;
  before(async () => {
    scratch = await createScratch("core");
    pgStore = await openPgStore({ url: scratch.databaseUrl(), poolSize: 2, timeoutMs: 10_000, serve: false });
  });
  after(async () => {
    await pgStore.close();
    await scratch.drop();
  });

  test("authentication and the first check of a day and a month wait for the store, then count from its ledger", async () => {
    const { key, record } = await createKey(pgStore, "pg", { perMinute: null, perDay: 2, monthlyTokens: 50 });
    const found = authenticate(pgStore, key);
    assert.ok(found instanceof Promise);
    assert.equal((await found)?.id, record.id);
    assert.equal(await authenticate(pgStore, `${key.slice(0, 13)}${"A".repeat(key.length - 13)}`), null);
    await pgStore.recordUsage({ keyId: record.id, requestId: `req_${record.id}`, endpoint: "/v1/systemone", model: "svc-1.6.0", inputTokens: 30, at: T - 1000 });
    const limiter = new Limiter(pgStore, UNLIMITED, () => T);
    const admitted = limiter.admit(record);
    assert.ok(admitted instanceof Promise);
    await admitted;
    assert.deepEqual(refusal(() => limiter.admit(record)).body.error, {
      type: "rate_limit_error",
      message: "This key's own limit is reached (per_day: 2). Retry in 48588 s.",
      limit: "key_limit",
      window: "per_day",
    });
    const reserved = limiter.reserve(record, 20);
    assert.ok(reserved instanceof Promise);
    await reserved;
    assert.equal(refusal(() => limiter.reserve(record, 1)).body.error.window, "monthly_quota");
  });
});
