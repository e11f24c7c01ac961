import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import Database from "better-sqlite3";
import { awayFromMinuteEdge, cli, post, startService, type Reply, type Service } from "./helpers/service.js";

let svc: Service;
before(async () => {
  svc = await startService({ env: { SVC_PER_MINUTE: "5", SVC_PER_DAY: "0", SVC_MONTHLY_TOKENS: "0" } });
});
after(async () => {
  await svc.stop();
});

const body = { model: "svc-latest", state: "Please cancel my order.", questions: { q: { type: "noul", instructions: "Does the customer want to cancel?" } } };

async function newKey(args: string[]): Promise<string> {
  const r = await cli(["keys", "create", ...args], { SVC_DATA_DIR: svc.dataDir });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  const key = lines[lines.length - 1];
  assert.match(key, /^svc_[0-9a-f]{8}_[A-Za-z0-9_-]{43}$/);
  return key;
}

function assertKeyLimit(r: Reply, window: "per_minute" | "per_day" | "monthly_quota"): void {
  assert.equal(r.status, 429);
  assert.equal(r.body.error.limit, "key_limit");
  assert.equal(r.body.error.window, window);
}

function secondsUntil(boundaryMs: number): number {
  return Math.ceil((boundaryMs - Date.now()) / 1000);
}

function assertRetryAfterNear(r: Reply, expected: number): void {
  const ra = Number(r.headers.get("retry-after"));
  assert.ok(Number.isInteger(ra) && ra >= 1, `Retry-After ${r.headers.get("retry-after")}`);
  assert.ok(Math.abs(ra - Math.max(1, expected)) <= 2, `Retry-After ${ra}, expected about ${expected}`);
}

describe("authentication", () => {
  test("missing, malformed, unknown and revoked keys are 401", async () => {
    const noAuth = await fetch(`${svc.url}/v1/systemone`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
    assert.equal(noAuth.status, 401);
    assert.equal((await noAuth.json()).error.type, "authentication_error");
    for (const header of ["Basic abc", "Bearer", "Bearer svc_12345678_unknownunknownunknown", "Bearer not-a-key"]) {
      const r = await fetch(`${svc.url}/v1/systemone`, { method: "POST", body: JSON.stringify(body), headers: { authorization: header } });
      assert.equal(r.status, 401, header);
      const b = await r.json();
      assert.equal(b.error.type, "authentication_error");
      assert.deepEqual(b.detail, []);
    }
    const key = await newKey(["--name", "to-revoke"]);
    assert.equal((await post({ url: svc.url, key }, "/v1/systemone", body)).status, 200);
    const prefix = key.slice(4, 12);
    const revoked = await cli(["keys", "revoke", prefix], { SVC_DATA_DIR: svc.dataDir });
    assert.equal(revoked.code, 0);
    assert.match(revoked.stdout, new RegExp(`^revoked key_[0-9a-f]{16} \\(to-revoke, prefix ${prefix}\\) at `));
    const after = await post({ url: svc.url, key }, "/v1/systemone", body);
    assert.equal(after.status, 401);
    assert.equal(after.body.error.message, "Invalid or revoked API key.");
    // Any writer to the file is seen at once, not only the CLI: the key cache follows a change count kept by triggers.
    const other = await newKey(["--name", "revoked-by-sql"]);
    assert.equal((await post({ url: svc.url, key: other }, "/v1/systemone", body)).status, 200);
    const db = new Database(join(svc.dataDir, "svc.sqlite"));
    db.prepare("UPDATE keys SET revoked_at = ? WHERE prefix = ?").run(new Date().toISOString(), other.slice(4, 12));
    db.close();
    assert.equal((await post({ url: svc.url, key: other }, "/v1/systemone", body)).status, 401);
    // A key with the right prefix but a wrong secret is refused.
    const forged = `${key.slice(0, 13)}${"A".repeat(43)}`;
    assert.equal((await post({ url: svc.url, key: forged }, "/v1/systemone", body)).status, 401);
  });

  test("keys are stored only as hashes and listed without secrets", async () => {
    const key = await newKey(["--name", "hash-check", "--per-minute", "9"]);
    const db = new Database(join(svc.dataDir, "svc.sqlite"), { readonly: true });
    const row = db.prepare("SELECT * FROM keys WHERE prefix = ?").get(key.slice(4, 12)) as Record<string, unknown>;
    db.close();
    assert.equal(row.per_minute, 9);
    assert.match(String(row.hash), /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(row).includes(key.slice(13)));
    const list = await cli(["keys", "list"], { SVC_DATA_DIR: svc.dataDir });
    assert.equal(list.code, 0);
    assert.match(list.stdout, /hash-check/);
    assert.ok(!list.stdout.includes(key.slice(13)));
  });
});

describe("limits", () => {
  test("server default per minute: exactly N of N+3 concurrent requests pass, the rest get 429 per_minute", async () => {
    await awayFromMinuteEdge();
    const key = await newKey(["--name", "burst"]);
    const replies = await Promise.all(Array.from({ length: 8 }, () => post({ url: svc.url, key }, "/v1/systemone", body)));
    const ok = replies.filter((r) => r.status === 200);
    const limited = replies.filter((r) => r.status === 429);
    assert.equal(ok.length, 5);
    assert.equal(limited.length, 3);
    for (const r of limited) {
      assert.equal(r.body.error.type, "rate_limit_error");
      assert.equal(r.body.error.limit, "per_minute");
      assert.match(r.body.error.message, /^Rate limit reached: 5 requests per minute\. Retry in \d+ s\.$/);
      assertRetryAfterNear(r, secondsUntil((Math.floor(Date.now() / 60000) + 1) * 60000));
    }
  });

  test("a key's own per-minute and per-day caps give 429 key_limit with the window named", async () => {
    await awayFromMinuteEdge();
    const key = await newKey(["--name", "own-minute", "--per-minute", "2"]);
    const s = { url: svc.url, key };
    assert.equal((await post(s, "/v1/systemone", body)).status, 200);
    assert.equal((await post(s, "/v1/systemone", body)).status, 200);
    assertKeyLimit(await post(s, "/v1/systemone", body), "per_minute");

    const dayKey = await newKey(["--name", "own-day", "--per-day", "3", "--per-minute", "100"]);
    const d = { url: svc.url, key: dayKey };
    for (let i = 0; i < 3; i++) assert.equal((await post(d, "/v1/systemone", body)).status, 200);
    const refused = await post(d, "/v1/systemone", body);
    assertKeyLimit(refused, "per_day");
    assertRetryAfterNear(refused, secondsUntil((Math.floor(Date.now() / 86400000) + 1) * 86400000));
  });

  test("a key's monthly token quota refuses the request that would pass it, and refused requests are not billed", async () => {
    const probe = await post(svc, "/v1/systemone", body);
    const cost = probe.body.usage.input_tokens as number;
    const key = await newKey(["--name", "quota", "--monthly-tokens", String(2 * cost + cost - 1), "--per-minute", "100"]);
    const s = { url: svc.url, key };
    assert.equal((await post(s, "/v1/systemone", body)).status, 200);
    assert.equal((await post(s, "/v1/systemone", body)).status, 200);
    const r = await post(s, "/v1/systemone", body);
    assertKeyLimit(r, "monthly_quota");
    const now = new Date();
    assertRetryAfterNear(r, secondsUntil(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)));
    // invalid requests are not billed either
    assert.equal((await post(s, "/v1/systemone", { ...body, model: "nope" })).status, 404);
    const usage = await cli(["usage", "--key", key.slice(4, 12), "--json"], { SVC_DATA_DIR: svc.dataDir });
    const report = JSON.parse(usage.stdout);
    assert.equal(report.keys.length, 1);
    assert.equal(report.keys[0].requests, 2);
    assert.equal(report.keys[0].input_tokens, 2 * cost);
  });
});

describe("usage records", () => {
  test("every 200 has exactly one record with its request id, endpoint, model and tokens", async () => {
    const key = await newKey(["--name", "ledger", "--per-minute", "100"]);
    const s = { url: svc.url, key };
    const replies = await Promise.all([
      post(s, "/v1/systemone", body),
      post(s, "/v1/systemone", { ...body, model: "jev-preview" }),
      post(s, "/v1/systemone", { ...body, questions: { a: body.questions.q, b: { type: "choice", instructions: "Which?", criteria: { x: null, y: null } } } }),
      post(s, "/v1/systemone", { ...body, questions: {} }),
    ]);
    assert.deepEqual(replies.map((r) => r.status), [200, 200, 200, 422]);
    const db = new Database(join(svc.dataDir, "svc.sqlite"), { readonly: true });
    const keyId = (db.prepare("SELECT id FROM keys WHERE prefix = ?").get(key.slice(4, 12)) as { id: string }).id;
    const rows = db.prepare("SELECT * FROM usage WHERE key_id = ? ORDER BY at").all(keyId) as Record<string, unknown>[];
    db.close();
    assert.equal(rows.length, 3);
    for (const r of replies.slice(0, 3)) {
      const row = rows.find((x) => x.request_id === r.headers.get("x-request-id"));
      assert.ok(row, "record for the request id");
      assert.equal(row.endpoint, "/v1/systemone");
      assert.equal(row.model, r.body.model);
      assert.equal(row.input_tokens, r.body.usage.input_tokens);
    }
    const text = await cli(["usage"], { SVC_DATA_DIR: svc.dataDir });
    const total = replies.slice(0, 3).reduce((s2, r) => s2 + (r.body.usage.input_tokens as number), 0);
    assert.match(text.stdout, new RegExp(`ledger\\s+${key.slice(4, 12)}\\s+3\\s+${total}\\n`));
    const other = await cli(["usage", "--month", "2001-01", "--json"], { SVC_DATA_DIR: svc.dataDir });
    assert.ok(JSON.parse(other.stdout).keys.every((k: { requests: number }) => k.requests === 0));
  });
});

describe("server-wide defaults for day and month", () => {
  test("per_day and monthly_quota defaults from the environment", async () => {
    const s2 = await startService({ env: { SVC_PER_MINUTE: "0", SVC_PER_DAY: "2" } });
    try {
      assert.equal((await post(s2, "/v1/systemone", body)).status, 200);
      assert.equal((await post(s2, "/v1/systemone", body)).status, 200);
      const r = await post(s2, "/v1/systemone", body);
      assert.equal(r.status, 429);
      assert.equal(r.body.error.limit, "per_day");
    } finally {
      await s2.stop();
    }
    const s3 = await startService({ env: { SVC_MONTHLY_TOKENS: "10" } });
    try {
      // One request larger than the whole quota can never pass it: 413, not a 429 to retry.
      const r = await post(s3, "/v1/systemone", body);
      assert.equal(r.status, 413);
      assert.equal(r.body.error.limit, "monthly_quota");
      assert.equal(r.headers.get("retry-after"), null);
      assert.match(r.body.error.message, /^This request alone needs \d+ input tokens, more than this key's whole monthly quota of 10: /);
    } finally {
      await s3.stop();
    }
  });
});
