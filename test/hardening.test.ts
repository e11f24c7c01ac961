import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { cli, startService, tempDir, type Service } from "./helpers/service.js";
import { rawExchange } from "./helpers/fuzz.js";
import { fire, maximalRequest } from "./helpers/pressure.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const GOOD = JSON.stringify({
  model: "svc-latest",
  state: "Where is my parcel? It has not arrived in two weeks.",
  questions: { q: { type: "noul", instructions: "Is this about shipping?" } },
});

function post(key: string, body: string, length = Buffer.byteLength(body)): string {
  return (
    `POST /v1/systemone HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\n` +
    `content-length: ${length}\r\n\r\n`
  );
}

/** Requests billed to the service's own key this month, from `svc usage --json`. */
async function billed(svc: Service): Promise<number> {
  const r = await cli(["usage", "--json"], { SVC_DATA_DIR: svc.dataDir });
  assert.equal(r.code, 0, r.stderr);
  const prefix = svc.key.split("_")[1];
  return (JSON.parse(r.stdout).keys as { prefix: string; requests: number }[]).find((k) => k.prefix === prefix)?.requests ?? 0;
}

/** Request-log lines (SVC_LOG on) with this status. */
const logLines = (svc: Service, status: number): string[] => svc.output().split("\n").filter((l) => new RegExp(` ${status} [\\d.]+ms key=`).test(l));

describe("connection-level hardening (body timeout 1 s, so headers 2 s)", () => {
  let svc: Service;
  const dataDir = join(tempDir(), "fresh", "data");
  before(async () => {
    svc = await startService({ dataDir, env: { SVC_LOG: "on", SVC_BODY_TIMEOUT_MS: "1000" } });
  });
  after(async () => {
    await svc.stop();
  });

  test("a valid request followed by junk bytes: the client gets one 400, the request is not billed", async () => {
    const before = await billed(svc);
    const abandoned = logLines(svc, 499).length;
    const r = await rawExchange(svc.url, async (put) => {
      put(post(svc.key, GOOD) + GOOD + "\u0000\u0001 junk that is not HTTP\r\n\r\n");
    });
    assert.deepEqual(r.answers.map((a) => a.status), [400]);
    assert.equal(r.closedByServer, true);
    assert.deepEqual(JSON.parse(r.answers[0].body.toString()), {
      error: { type: "invalid_request_error", message: "The request could not be parsed as HTTP." },
      detail: [],
    });
    await sleep(300);
    assert.equal(await billed(svc), before);
    assert.equal(logLines(svc, 499).length, abandoned + 1, "the valid request was cancelled, and logged so");
  });

  test("a 401 to a request whose body is still arriving closes the connection: no second, unsolicited 408", async () => {
    const r = await rawExchange(
      svc.url,
      async (put, wait) => {
        put(post("svc_00000000_not-a-key", "", 100) + '{"model":');
        await wait(3500);
        put("1");
      },
      500,
    );
    assert.deepEqual(r.answers.map((a) => a.status), [401]);
    assert.equal(r.answers[0].headers.connection, "close");
    assert.equal(r.closedByServer, true);
  });

  test("headers that never finish get 408 saying it was the headers, and a request-log line", async () => {
    const before = logLines(svc, 408).length;
    const t0 = performance.now();
    const r = await rawExchange(svc.url, async (put) => put("GET /healthz HTTP/1.1\r\nhost: x\r\n"), 5000);
    const ms = performance.now() - t0;
    assert.deepEqual(r.answers.map((a) => a.status), [408]);
    assert.deepEqual(JSON.parse(r.answers[0].body.toString()), {
      error: { type: "timeout_error", message: "The request headers did not arrive within 2 seconds." },
      detail: [],
    });
    assert.match(String(r.answers[0].headers["x-request-id"]), /^req_[0-9a-f]{24}$/);
    assert.ok(ms >= 1900 && ms < 3500, `answered after ${ms.toFixed(0)} ms`);
    assert.equal(logLines(svc, 408).length, before + 1);
  });

  test("on a kept-alive connection, a second request whose headers stall gets its own 408", async () => {
    const r = await rawExchange(
      svc.url,
      async (put, wait) => {
        put("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n");
        await wait(200);
        put("GET /healthz HTTP/1.1\r\nhost: x\r\n");
      },
      5000,
    );
    assert.deepEqual(r.answers.map((a) => a.status), [200, 408]);
    assert.equal(JSON.parse(r.answers[1].body.toString()).error.message, "The request headers did not arrive within 2 seconds.");
  });

  test("an unparsable request line gets the documented 400 and a request-log line", async () => {
    const before = logLines(svc, 400).length;
    const r = await rawExchange(svc.url, async (put) => put("BLAH\r\n\r\n"));
    assert.deepEqual(r.answers.map((a) => a.status), [400]);
    assert.equal(logLines(svc, 400).length, before + 1);
  });

  test("a request target in absolute form is routed by its path", async () => {
    const port = new URL(svc.url).port;
    const r = await rawExchange(svc.url, async (put) => put(`GET http://127.0.0.1:${port}/healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`), 300);
    assert.deepEqual(r.answers.map((a) => a.status), [200]);
    assert.deepEqual(JSON.parse(r.answers[0].body.toString()), { status: "ok", model: "ready" });
  });

  test("a key passed in the query string is never logged; every query value is masked", async () => {
    const res = await fetch(`${svc.url}/v1/models?api_key=${svc.key}&note=hello`, { headers: { authorization: `Bearer ${svc.key}` } });
    assert.equal(res.status, 200);
    await res.text();
    await sleep(100);
    const out = svc.output();
    assert.ok(!out.includes(svc.key), "the full key is in the log");
    // svc_<8 hex>_<secret>: the secret is all after the second "_" (it may hold "_" itself: split("_")[2] would be a stub of it)
    assert.ok(!out.includes(svc.key.slice(svc.key.indexOf("_", 4) + 1)), "the key's secret part is in the log");
    const prefix = svc.key.split("_")[1];
    assert.match(out, new RegExp(` GET /v1/models\\?api_key=\\*\\*\\*&note=\\*\\*\\* 200 [\\d.]+ms key=${prefix}\n`));
  });

  test("HTTP/1.1 without Host: 400 in the documented shape with request ids, and a request-log line", async () => {
    const before = logLines(svc, 400).length;
    const r = await rawExchange(svc.url, async (put) => put(post(svc.key, GOOD).replace("host: x\r\n", "") + GOOD), 1000);
    assert.deepEqual(r.answers.map((a) => a.status), [400]);
    assert.deepEqual(JSON.parse(r.answers[0].body.toString()), {
      error: { type: "invalid_request_error", message: "The request could not be parsed as HTTP." },
      detail: [],
    });
    const id = r.answers[0].headers["x-request-id"];
    assert.match(String(id), /^req_[0-9a-f]{24}$/);
    assert.deepEqual([r.answers[0].headers["x-alt-request-id"], r.answers[0].headers["x-typesafe-request-id"]], [id, id]);
    await sleep(100);
    assert.equal(logLines(svc, 400).length, before + 1);
    assert.match(svc.output(), new RegExp(`${id} POST /v1/systemone 400 [\\d.]+ms key=-\n`));
  });

  test("a new data folder is 700 and the SQLite files 600", () => {
    assert.equal(statSync(dataDir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dataDir, "..")).mode & 0o777, 0o700);
    assert.equal(statSync(join(dataDir, "svc.sqlite")).mode & 0o777, 0o600);
    assert.equal(statSync(join(dataDir, "svc.sqlite-wal")).mode & 0o777, 0o600);
  });

  test("a request with 16,320 problems gets a 422 of 100 listed plus one entry saying how many were left out", async () => {
    const questions: Record<string, unknown> = {};
    for (let q = 0; q < 64; q++) questions[`q${q}`] = { type: "choice", criteria: Array.from({ length: 255 }, () => 1) };
    const body = JSON.stringify({ model: "svc-latest", state: "x", questions });
    const res = await fetch(`${svc.url}/v1/systemone`, { method: "POST", headers: { authorization: `Bearer ${svc.key}`, "content-type": "application/json" }, body });
    const text = await res.text();
    assert.equal(res.status, 422);
    assert.ok(text.length < 20_000, `${text.length} bytes`);
    const r = JSON.parse(text) as { error: Record<string, unknown>; detail: { loc: unknown[]; msg: string; type: string }[] };
    assert.equal(r.error.problems_omitted, 16_220);
    assert.equal(r.error.message, "questions.q0.criteria.0: Input should be a valid string.");
    assert.equal(r.detail.length, 101);
    assert.deepEqual(r.detail[99].loc, ["body", "questions", "q0", "criteria", 99]);
    assert.deepEqual(r.detail[100], { loc: ["body"], msg: "16220 more problems were found and are not listed.", type: "too_many_problems" });
  });
});

describe("SIGTERM with a request still running past the grace period", () => {
  test("it is answered 503 service_unavailable_error with Retry-After, not billed, and the process exits 0", async () => {
    const svc = await startService({ env: { SVC_SHUTDOWN_GRACE_MS: "500", SVC_PER_MINUTE: "0" } });
    const running = fire(`${svc.url}/v1/systemone`, svc.key, maximalRequest(77), { timeoutMs: 60_000 });
    await sleep(800);
    const t0 = performance.now();
    const exited = svc.stop("SIGTERM");
    const r = await running;
    const code = await exited;
    assert.equal(r.status, 503);
    assert.deepEqual(r.body, { error: { type: "service_unavailable_error", message: "The server is shutting down; retry in a few seconds." }, detail: [] });
    assert.equal(r.headers["retry-after"], "5");
    assert.ok(performance.now() - t0 < 3000, "answered soon after the grace period");
    assert.equal(code, 0);
    assert.doesNotMatch(svc.output(), /Error|at .*\.js:\d+/);
    assert.equal(await billed(svc), 0);
  });
});

describe("past SVC_MAX_CONNECTIONS open connections", () => {
  test("one more connection is answered 503 with Retry-After and closed; a freed slot serves again", async () => {
    const svc = await startService({ env: { SVC_MAX_CONNECTIONS: "4" } });
    try {
      const { hostname, port } = new URL(svc.url);
      const held = await Promise.all(
        Array.from({ length: 4 }, () => new Promise<Socket>((resolve) => {
          const s = connect(Number(port), hostname, () => resolve(s));
        })),
      );
      const r = await rawExchange(svc.url, async (put) => put("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n"), 1000);
      assert.deepEqual(r.answers.map((a) => a.status), [503]);
      assert.equal(r.answers[0].headers["retry-after"], "1");
      assert.deepEqual(JSON.parse(r.answers[0].body.toString()), {
        error: { type: "service_unavailable_error", message: "The server is at capacity; retry in 1 s." },
        detail: [],
      });
      assert.equal(r.closedByServer, true);
      held[0].destroy();
      await sleep(100);
      const ok = await rawExchange(svc.url, async (put) => put("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n"), 300);
      assert.deepEqual(ok.answers.map((a) => a.status), [200]);
      for (const s of held) s.destroy();
    } finally {
      await svc.stop();
    }
  });
});
