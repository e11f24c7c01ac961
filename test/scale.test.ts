/**
 * Three `svc serve` instances sharing keys and usage in PostgreSQL and limit counters in Redis (the
 * real servers of the test machine, a database and a key prefix of this run's own). PostgreSQL and
 * Redis are made unreachable through TCP relays this test owns (TcpProxy: open connections reset,
 * new ones closed), so that the shared servers keep running for everyone else; "Redis lost its data"
 * is the deletion of every key under this run's prefix, which is what a restart without persistence
 * does to this service's counters.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { awayFromMinuteEdge, cli, post, startService, tempDir, type Reply, type Service } from "./helpers/service.js";
import { createScratch, REDIS_URL, type Scratch } from "./helpers/shared-state.js";
import { TcpProxy } from "./helpers/tcp-proxy.js";
import { MIGRATIONS } from "../src/accounts/migrations.js";

const body = { model: "svc-latest", state: "Please cancel my order.", questions: { q: { type: "noul", instructions: "Does the customer want to cancel?" } } };

let scratch: Scratch;
let pgProxy: TcpProxy;
let redisProxy: TcpProxy;
let svcs: Service[] = [];
let env: Record<string, string>;
/** Request ids of every 200 this test saw, and of requests that got no answer at all (connection lost). */
const ok = new Set<string>();
const unanswered = new Set<string>();
let sent = 0;

const redisTarget = new URL(REDIS_URL);

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

/** A redis-server of this test's own (nothing on disk), resolved once it answers. */
async function startRedis(port: number): Promise<ChildProcess> {
  const proc = spawn("redis-server", ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const up = await until(async () => {
    const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true, retryStrategy: () => null, enableOfflineQueue: false });
    try {
      await probe.connect();
      return (await probe.ping()) === "PONG";
    } catch {
      return false;
    } finally {
      probe.disconnect();
    }
  }, 5000);
  assert.ok(up, `redis-server on port ${port} did not start`);
  return proc;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One request to instance `i`; 200s are recorded. A request cut off with its instance resolves to status 0. */
async function call(i: number, key: string): Promise<Reply> {
  sent++;
  try {
    const r = await post({ url: svcs[i].url, key }, "/v1/systemone", body);
    if (r.status === 200) ok.add(r.headers.get("x-request-id")!);
    return r;
  } catch {
    unanswered.add(String(sent));
    return { status: 0, headers: new Headers(), body: null };
  }
}

/** n requests at once, spread round-robin over the instances. */
function burst(n: number, key: string, instances = svcs.length): Promise<Reply[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => call(i % instances, key)));
}

async function cliKey(args: string[]): Promise<string> {
  const r = await cli(["keys", "create", ...args], env);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  return lines[lines.length - 1];
}

async function rowIds(): Promise<Set<string>> {
  const r = await scratch.db.query<{ request_id: string }>("SELECT request_id FROM usage");
  return new Set(r.rows.map((x) => x.request_id));
}

/** Every 200 seen has its row and there is no other row; on a mismatch, the instances' log lines of the odd ids. */
async function assertRowsAre200s(): Promise<void> {
  const rows = await rowIds();
  const odd = [...rows].filter((id) => !ok.has(id)).concat([...ok].filter((id) => !rows.has(id)));
  const lines = svcs.flatMap((s) => s.output().split("\n")).filter((l) => odd.some((id) => l.includes(id)));
  assert.deepEqual(odd, [], `rows without a 200 or 200s without a row:\n${lines.join("\n")}`);
}

async function health(i: number): Promise<unknown> {
  return (await fetch(`${svcs[i].url}/healthz`)).json();
}

/** Polls until `check` holds or `ms` pass; returns whether it held. */
async function until(check: () => Promise<boolean>, ms: number, step = 50): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await sleep(step);
  }
}

/**
 * Six clients sending requests one after another, spread over the instances, until stop() (which a
 * test calls in `finally`, so that a failed assertion cannot leave them running). Counts statuses.
 */
function load(key: string): { statuses: Map<number, number>; odd503s: Reply[]; stop(): Promise<void> } {
  let running = true;
  const statuses = new Map<number, number>();
  /** 503s not in the documented shape (service_unavailable_error with Retry-After: 2). */
  const odd503s: Reply[] = [];
  const clients = Array.from({ length: 6 }, async (_, c) => {
    while (running) {
      const r = await call(c % svcs.length, key);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 503 && (r.body?.error?.type !== "service_unavailable_error" || r.headers.get("retry-after") !== "2")) odd503s.push(r);
      if (r.status !== 200) await sleep(20);
    }
  });
  return {
    statuses,
    odd503s,
    async stop() {
      running = false;
      await Promise.all(clients);
    },
  };
}

function count(rs: Reply[], status: number): number {
  return rs.filter((r) => r.status === status).length;
}

before(async () => {
  scratch = await createScratch("scale");
  pgProxy = await TcpProxy.start("127.0.0.1", Number(new URL(scratch.databaseUrl()).port));
  redisProxy = await TcpProxy.start(redisTarget.hostname, Number(redisTarget.port || 6379));
  env = {
    SVC_DATA_DIR: tempDir(),
    SVC_DATABASE_URL: scratch.databaseUrl("127.0.0.1", pgProxy.port),
    SVC_REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`,
    SVC_REDIS_PREFIX: scratch.redisPrefix,
    SVC_PER_MINUTE: "0",
    SVC_PER_DAY: "0",
    SVC_MONTHLY_TOKENS: "0",
    // These tests count repeated identical requests across instances: replays (test/retry-cache.test.ts) are off.
    SVC_CACHE_WINDOW_MS: "0",
    SVC_PG_TIMEOUT_MS: "1500",
    SVC_REDIS_TIMEOUT_MS: "500",
    SVC_WORKERS: "1",
    SVC_LOG: "text",
  };
  // All three start at once on the empty database: one migrates and creates the bootstrap key, the others wait and find it.
  const key = `svc_0123abcd_${"k".repeat(43)}`;
  svcs = await Promise.all([0, 1, 2].map(() => startService({ key, env: { ...env, SVC_DATA_DIR: tempDir() } })));
});

after(async () => {
  await Promise.all(svcs.map((s) => s.stop("SIGKILL")));
  await pgProxy?.close();
  await redisProxy?.close();
  await scratch?.drop();
});

describe("three instances on PostgreSQL and Redis", () => {
  test("the schema is migrated once, by versioned migrations, while three instances start together", async () => {
    const m = await scratch.db.query("SELECT version, name FROM schema_migrations ORDER BY version");
    assert.deepEqual(m.rows, MIGRATIONS.map((x) => ({ version: x.version, name: x.name })));
    assert.deepEqual(m.rows.map((r: { version: number }) => r.version), [1, 2, 3]);
    const keys = await scratch.db.query("SELECT name, prefix FROM keys");
    assert.deepEqual(keys.rows, [{ name: "bootstrap", prefix: "0123abcd" }]);
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await health(i), { status: "ok", model: "ready", dependencies: { postgres: "up", redis: "up" } });
      assert.equal((await call(i, svcs[0].key)).status, 200);
    }
  });

  test("svc keys create, list, revoke and svc usage work against PostgreSQL", async () => {
    const key = await cliKey(["--name", "cli-check", "--per-minute", "9"]);
    const prefix = key.slice(4, 12);
    const list = await cli(["keys", "list"], env);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`cli-check\\s+${prefix}\\s+\\S+\\s+active\\s+9\\s+default\\s+default`));
    assert.ok(!list.stdout.includes(key.slice(13)), "the secret is never listed");
    const rs = await burst(3, key);
    assert.deepEqual(rs.map((r) => r.status), [200, 200, 200]);
    const tokens = rs[0].body.usage.input_tokens as number;
    const usage = await cli(["usage", "--key", prefix, "--json"], env);
    assert.equal(usage.code, 0, usage.stderr);
    const row = JSON.parse(usage.stdout).keys[0];
    assert.equal(row.prefix, prefix);
    assert.equal(row.requests, 3);
    assert.equal(row.input_tokens, 3 * tokens);
    const revoked = await cli(["keys", "revoke", prefix], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, new RegExp(`^revoked key_[0-9a-f]{16} \\(cli-check, prefix ${prefix}\\) at `));
    const missing = await cli(["keys", "revoke", "ffffffff"], env);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, "svc: no key with id or prefix ffffffff\n");
  });

  test("limits hold exactly across instances: N per minute, per day and monthly tokens admit exactly N of many concurrent requests", async () => {
    await awayFromMinuteEdge();
    const minuteKey = await cliKey(["--name", "minute", "--per-minute", "10"]);
    const rs = await burst(30, minuteKey);
    assert.equal(count(rs, 200), 10);
    assert.equal(count(rs, 429), 20);
    for (const r of rs.filter((x) => x.status === 429)) {
      assert.equal(r.body.error.type, "rate_limit_error");
      assert.equal(r.body.error.limit, "key_limit");
      assert.equal(r.body.error.window, "per_minute");
      const retry = Number(r.headers.get("retry-after"));
      assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    }

    const dayKey = await cliKey(["--name", "day", "--per-day", "7"]);
    const ds = await burst(21, dayKey);
    assert.equal(count(ds, 200), 7);
    assert.equal(count(ds, 429), 14);
    assert.ok(ds.filter((x) => x.status === 429).every((r) => r.body.error.window === "per_day"));

    const tokens = (await call(0, svcs[0].key)).body.usage.input_tokens as number;
    const monthKey = await cliKey(["--name", "month", "--monthly-tokens", String(5 * tokens + Math.floor(tokens / 2))]);
    const ms = await burst(15, monthKey);
    assert.equal(count(ms, 200), 5);
    assert.equal(count(ms, 429), 10);
    const refused = ms.find((x) => x.status === 429)!;
    assert.equal(refused.body.error.window, "monthly_quota");
    assert.equal(
      refused.body.error.message,
      `This key's own limit is reached (monthly_quota: ${5 * tokens + Math.floor(tokens / 2)}). Retry in ${refused.headers.get("retry-after")} s.`,
    );
  });

  test("every 200 has its usage row in PostgreSQL, and no other request has one", async () => {
    await assertRowsAre200s();
  });

  test("svc keys revoke takes effect on all three instances within one second", async (t) => {
    const key = await cliKey(["--name", "to-revoke"]);
    for (let i = 0; i < 3; i++) assert.equal((await call(i, key)).status, 200); // cached on every instance
    const r = await cli(["keys", "revoke", key.slice(4, 12)], env);
    assert.equal(r.code, 0, r.stderr);
    const revokedAt = Date.now();
    const seen = await Promise.all(
      [0, 1, 2].map(async (i) => {
        // Through call(): a 200 answered before the notification arrived is billed, and counted as such.
        await until(async () => (await call(i, key)).status === 401, 2000, 20);
        return Date.now() - revokedAt;
      }),
    );
    t.diagnostic(`revocation seen after ${seen.join(", ")} ms`);
    for (const ms of seen) assert.ok(ms < 1000, `revocation seen after ${ms} ms (${seen.join(", ")})`);
    const after = await post({ url: svcs[2].url, key }, "/v1/systemone", body);
    assert.equal(after.status, 401);
    assert.equal(after.body.error.message, "Invalid or revoked API key.");
  });

  test("when Redis loses its data, day and month figures are rebuilt from the ledger", async () => {
    const tokens = (await call(0, svcs[0].key)).body.usage.input_tokens as number;
    const key = await cliKey(["--name", "rebuilt", "--per-day", "12", "--monthly-tokens", String(9 * tokens)]);
    assert.equal(count(await burst(4, key), 200), 4);
    assert.ok((await scratch.flushRedis()) > 0);
    // The day has 4 billed requests and the month 4 requests' tokens: 8 more fit the day, 5 the month.
    const rs = await burst(8, key);
    assert.equal(count(rs, 200), 5);
    assert.ok(rs.filter((r) => r.status === 429).every((r) => r.body.error.window === "monthly_quota"));
    await scratch.flushRedis();
    const day = await cliKey(["--name", "rebuilt-day", "--per-day", "6"]);
    assert.equal(count(await burst(4, day), 200), 4);
    await scratch.flushRedis();
    const ds = await burst(6, day);
    assert.equal(count(ds, 200), 2);
    assert.ok(ds.filter((r) => r.status === 429).every((r) => r.body.error.window === "per_day"));
  });

  test("Redis unreachable: 503 with Retry-After and /healthz names it; back by itself, with its data gone", async () => {
    redisProxy.cut();
    await scratch.flushRedis();
    assert.ok(await until(async () => (await call(1, svcs[0].key)).status === 503, 3000));
    const r = await call(2, svcs[0].key);
    assert.equal(r.status, 503);
    assert.equal(r.headers.get("retry-after"), "2");
    assert.deepEqual(r.body, {
      error: { type: "service_unavailable_error", message: "A service this server depends on is unavailable; the request was not served or billed. Retry in 2 s." },
      detail: [],
    });
    for (let i = 0; i < 3; i++) {
      assert.ok(await until(async () => JSON.stringify(await health(i)) === JSON.stringify({ status: "degraded", model: "ready", dependencies: { postgres: "up", redis: "down" } }), 3000), `instance ${i}: ${JSON.stringify(await health(i))}`);
    }
    redisProxy.restore();
    for (let i = 0; i < 3; i++) {
      assert.ok(await until(async () => (await call(i, svcs[0].key)).status === 200, 5000), `instance ${i} did not recover`);
      assert.deepEqual(await health(i), { status: "ok", model: "ready", dependencies: { postgres: "up", redis: "up" } });
    }
    await assertRowsAre200s();
  });

  test("Redis restarted (a redis-server of this test's own, killed and started again): 503 while it is down, then 200s with the day and month rebuilt", async () => {
    const port = await freePort();
    const redis = await startRedis(port);
    let restarted: ChildProcess | null = null;
    try {
      const tokens = (await call(0, svcs[0].key)).body.usage.input_tokens as number;
      const key = await cliKey(["--name", "restart", "--monthly-tokens", String(7 * tokens)]);
      assert.equal(count(await burst(3, key), 200), 3);
      // Move the instances to the empty server: their connections drop and come back to it.
      redisProxy.cut();
      redisProxy.target = { host: "127.0.0.1", port };
      redisProxy.restore();
      assert.ok(await until(async () => (await call(0, svcs[0].key)).status === 200 && (await call(1, svcs[0].key)).status === 200 && (await call(2, svcs[0].key)).status === 200, 5000));
      assert.equal(count(await burst(2, key), 200), 2); // 5 of the month's 7 requests' tokens now
      redis.kill("SIGKILL");
      await once(redis, "exit");
      assert.ok(await until(async () => (await call(2, svcs[0].key)).status === 503, 3000));
      restarted = await startRedis(port);
      for (let i = 0; i < 3; i++) assert.ok(await until(async () => (await call(i, svcs[0].key)).status === 200, 5000), `instance ${i} did not recover`);
      // Nothing survived the restart: the month is rebuilt from the ledger (5 requests' tokens), so 2 more fit.
      const rs = await burst(6, key);
      assert.equal(count(rs, 200), 2);
      assert.deepEqual(rs.filter((r) => r.status !== 200).map((r) => [r.status, r.body.error.window]), Array(4).fill([429, "monthly_quota"]));
    } finally {
      // Back to the shared server for the tests after this one.
      redisProxy.cut();
      redisProxy.target = { host: redisTarget.hostname, port: Number(redisTarget.port || 6379) };
      redisProxy.restore();
      redis.kill("SIGKILL");
      restarted?.kill("SIGKILL");
    }
    for (let i = 0; i < 3; i++) assert.ok(await until(async () => (await call(i, svcs[0].key)).status === 200, 5000), `instance ${i} did not come back`);
    await assertRowsAre200s();
  });

  test("PostgreSQL unreachable under load: 503 meanwhile, then 200s; every 200 billed once and nothing else billed", async (t) => {
    const key = await cliKey(["--name", "pg-outage"]);
    const traffic = load(key);
    const { statuses } = traffic;
    let before200 = 0;
    try {
      await sleep(1000);
      pgProxy.cut();
      assert.ok(await until(async () => JSON.stringify(await health(0)).includes('"postgres":"down"'), 3000), "healthz did not report postgres down");
      await sleep(2000);
      pgProxy.restore();
      assert.ok(await until(async () => ((await health(0)) as { status: string }).status === "ok", 5000), "healthz did not report ok again");
      before200 = statuses.get(200) ?? 0;
      await sleep(1500);
    } finally {
      pgProxy.restore();
      await traffic.stop();
    }
    t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
    assert.ok((statuses.get(503) ?? 0) > 0, `statuses: ${JSON.stringify([...statuses])}`);
    assert.ok((statuses.get(200) ?? 0) > before200, "200s again after PostgreSQL came back");
    assert.deepEqual([...statuses.keys()].sort(), [200, 503]);
    assert.deepEqual(traffic.odd503s, []);
    // Rows of requests answered 503 while their commit was in doubt are deleted once PostgreSQL is back.
    assert.ok(await until(async () => (await rowIds()).size === ok.size, 5000), `${(await rowIds()).size} rows, ${ok.size} 200s`);
    await assertRowsAre200s();
  });

  test("SIGKILL of one instance under load loses no billed row", async (t) => {
    const key = await cliKey(["--name", "kill"]);
    const traffic = load(key);
    try {
      await sleep(1500);
      const killed = svcs[2].proc;
      const exited = new Promise((r) => killed.once("exit", r));
      killed.kill("SIGKILL");
      await exited;
      await sleep(1000);
    } finally {
      await traffic.stop();
    }
    const rows = await rowIds();
    t.diagnostic(`${ok.size} 200s, ${rows.size} rows, ${unanswered.size} requests without an answer`);
    for (const id of ok) assert.ok(rows.has(id), `200 ${id} has no usage row`);
    // Rows beyond the 200s seen: only requests the killed instance committed and could not answer.
    assert.ok(rows.size - ok.size <= unanswered.size, `${rows.size - ok.size} extra rows, ${unanswered.size} unanswered`);
    svcs.pop();
    assert.equal((await call(0, key)).status, 200);
  });
});
