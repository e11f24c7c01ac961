import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { UsageLedger } from "../src/accounts/ledger.js";
import { openSqliteStore } from "../src/accounts/sqlite-store.js";
import type { UsageRecord } from "../src/accounts/store.js";
import { cli, post, ROOT, startService, tempDir } from "./helpers/service.js";

const rec = (requestId: string, inputTokens = 7): UsageRecord => ({
  requestId,
  keyId: "key_0000000000000000",
  endpoint: "/v1/systemone",
  model: "svc-1.6.0",
  inputTokens,
  at: 1_700_000_000_000,
});

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

function rows(file: string): { n: number; tokens: number; ids: string[] } {
  const db = new Database(file, { readonly: true });
  try {
    const ids = db.prepare("SELECT request_id FROM usage ORDER BY request_id").pluck().all() as string[];
    const tokens = db.prepare("SELECT COALESCE(SUM(input_tokens), 0) FROM usage").pluck().get() as number;
    assert.equal(db.pragma("integrity_check", { simple: true }), "ok");
    return { n: ids.length, tokens, ids };
  } finally {
    db.close();
  }
}

/** Outcome of each promise, in order: "ok" or the error message. */
async function outcomes(ps: Promise<void>[]): Promise<string[]> {
  return (await Promise.allSettled(ps)).map((s) => (s.status === "fulfilled" ? "ok" : String((s.reason as Error).message)));
}

/**
 * Runs `body` as an ES module in its own node process, after a line that imports openSqliteStore;
 * resolves with its exit code and everything it printed (it must end within 15 s).
 */
async function runScript(name: string, body: string): Promise<{ code: number | null; out: string }> {
  const scriptFile = join(tempDir(), name);
  const store = pathToFileURL(join(ROOT, "dist", "src", "accounts", "sqlite-store.js")).href;
  writeFileSync(scriptFile, `const { openSqliteStore } = await import(${JSON.stringify(store)});\n${body}`);
  const child = spawn(process.execPath, [scriptFile], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running after 15 s: ${out}`)), 15_000);
    child.on("exit", (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  return { code, out };
}

describe("usage ledger (its own thread, real SQLite file)", () => {
  test("every record handed over before close() is committed, over many turns", async () => {
    const file = join(tempDir(), "svc.sqlite");
    const store = openSqliteStore(file);
    const ps: Promise<void>[] = [];
    for (let i = 0; i < 3000; i++) {
      ps.push(store.recordUsage(rec(`req_${String(i).padStart(6, "0")}`, i % 10)));
      if (i % 250 === 0) await turn();
    }
    await store.close();
    assert.deepEqual(new Set(await outcomes(ps)), new Set(["ok"]));
    const r = rows(file);
    assert.equal(r.n, 3000);
    assert.equal(r.tokens, 300 * 45);
    await assert.rejects(store.recordUsage(rec("req_late")), /the usage ledger is closed/);
  });

  test("a duplicate request id fails only its own record, in the same batch or a later one", async () => {
    const file = join(tempDir(), "svc.sqlite");
    const store = openSqliteStore(file);
    const same = await outcomes([store.recordUsage(rec("req_a")), store.recordUsage(rec("req_a")), store.recordUsage(rec("req_b"))]);
    assert.equal(same[0], "ok");
    assert.match(same[1], /^usage record not written: UNIQUE constraint failed: usage\.request_id$/);
    assert.equal(same[2], "ok");
    assert.match((await outcomes([store.recordUsage(rec("req_b"))]))[0], /UNIQUE constraint failed/);
    await store.close();
    assert.deepEqual(rows(file).ids, ["req_a", "req_b"]);
  });

  test("an idle ledger does not keep the process alive, started at once or by a record", async () => {
    const file = join(tempDir(), "svc.sqlite");
    const other = join(tempDir(), "svc.sqlite");
    const { code, out } = await runScript(
      "record-once.mjs",
      `openSqliteStore(${JSON.stringify(other)}, { startLedger: true });
      const store = openSqliteStore(${JSON.stringify(file)});
      await store.recordUsage({ requestId: "req_x", keyId: "k", endpoint: "/v1/decide", model: "m", inputTokens: 3, at: 0 });
      console.log("recorded");`,
    );
    assert.equal(code, 0, out);
    assert.equal(out, "recorded\n");
    assert.equal(rows(file).n, 1);
  });

  describe("a worker that dies", () => {
    /** A ledger on the fault-injecting worker; `unreadable`: the check of which rows landed fails too. */
    const setup = (unreadable = false) => {
      const file = join(tempDir(), "svc.sqlite");
      const store = openSqliteStore(file); // creates the schema
      const reader = new Database(file, { readonly: true });
      const has = reader.prepare("SELECT 1 FROM usage WHERE request_id = ?").pluck();
      const ledger = new UsageLedger(
        { file, sync: "full" },
        (ids) => {
          if (unreadable) throw new Error("the file cannot be read");
          return new Set(ids.filter((id) => has.get(id) !== undefined));
        },
        pathToFileURL(join(ROOT, "test", "fixtures", "crashing-ledger-worker.mjs")),
      );
      return {
        file,
        ledger,
        async done() {
          await ledger.close();
          reader.close();
          await store.close();
        },
      };
    };

    test("before committing: its callers fail, nothing is written, the next record starts a new worker", async () => {
      const t = setup();
      assert.deepEqual(await outcomes([t.ledger.record(rec("req_1"))]), ["ok"]);
      const lost = await outcomes([t.ledger.record(rec("req_die_before_2")), t.ledger.record(rec("req_3"))]);
      assert.deepEqual(lost, ["usage ledger worker exited with code 2", "usage ledger worker exited with code 2"]);
      assert.deepEqual(await outcomes([t.ledger.record(rec("req_4"))]), ["ok"]);
      await t.done();
      assert.deepEqual(rows(t.file).ids, ["req_1", "req_4"]);
    });

    test("after committing, before answering: its callers resume as billed, because the rows are in the file", async () => {
      const t = setup();
      const ok = await outcomes([t.ledger.record(rec("req_die_after_1")), t.ledger.record(rec("req_2"))]);
      assert.deepEqual(ok, ["ok", "ok"]);
      assert.deepEqual(await outcomes([t.ledger.record(rec("req_3"))]), ["ok"]);
      await t.done();
      assert.deepEqual(rows(t.file).ids, ["req_2", "req_3", "req_die_after_1"]);
    });

    test("with an uncaught error: its callers fail with that error, and a record sent at once goes to a new worker", async () => {
      const t = setup();
      const lost = t.ledger.record(rec("req_throw_1"));
      // Recorded in the same turn as the failure is seen: the old worker's exit, which follows its
      // error, must not take this record with it.
      const next = lost.then(
        () => "no error",
        (err: Error) => {
          const again = t.ledger.record(rec("req_2"));
          return outcomes([again]).then(([o]) => `${err.message} | ${o}`);
        },
      );
      assert.equal(await next, "usage ledger worker failed: injected failure | ok");
      await t.done();
      assert.deepEqual(rows(t.file).ids, ["req_2"]);
    });

    test("when which rows landed cannot be read: its callers fail (not billed), and the ledger goes on", async () => {
      const t = setup(true);
      assert.deepEqual(await outcomes([t.ledger.record(rec("req_die_after_1"))]), ["usage ledger worker exited with code 3"]);
      assert.deepEqual(await outcomes([t.ledger.record(rec("req_2"))]), ["ok"]);
      await t.done();
    });

    test("a worker that does not end by closing the file makes close() reject, after its records are committed", async () => {
      const t = setup();
      assert.deepEqual(await outcomes([t.ledger.record(rec("req_bad_close_1"))]), ["ok"]);
      await assert.rejects(t.done(), /^Error: usage ledger worker exited with code 4 while closing$/);
      assert.deepEqual(rows(t.file).ids, ["req_bad_close_1"]);
    });

    test("start() starts one worker at once, records use it, and after close() nothing starts one", async () => {
      const t = setup();
      const starts = (): number => (existsSync(`${t.file}.starts`) ? readFileSync(`${t.file}.starts`, "utf8").split("\n").length - 1 : 0);
      t.ledger.start();
      t.ledger.start();
      for (const t0 = Date.now(); starts() === 0 && Date.now() - t0 < 5000; ) await new Promise((r) => setTimeout(r, 10));
      assert.equal(starts(), 1, "started before any record");
      assert.deepEqual(await outcomes([t.ledger.record(rec("req_1")), t.ledger.record(rec("req_2"))]), ["ok", "ok"]);
      await t.done();
      t.ledger.start();
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(starts(), 1);
      await assert.rejects(t.ledger.record(rec("req_3")), /the usage ledger is closed/);
    });
  });

  test("close() holds the process open until the worker has committed and closed the file", async () => {
    const file = join(tempDir(), "svc.sqlite");
    const { code, out } = await runScript(
      "close-with-record.mjs",
      `const store = openSqliteStore(${JSON.stringify(file)});
      const rec = (id) => ({ requestId: id, keyId: "k", endpoint: "/v1/decide", model: "m", inputTokens: 3, at: 0 });
      await store.recordUsage(rec("req_1"));
      const late = store.recordUsage(rec("req_2"));
      await store.close();
      await late;
      console.log("closed");`,
    );
    assert.equal(code, 0, out);
    assert.equal(out, "closed\n");
    assert.deepEqual(rows(file).ids, ["req_1", "req_2"]);
  });

  test("over HTTP: a record that cannot be written is a 500 that is not billed, and the service recovers", async () => {
    // The same body three times, each run and billed: the retry cache is off.
    const svc = await startService({ env: { SVC_MODEL: join(ROOT, "test", "fixtures", "tiny-nli"), SVC_CACHE_WINDOW_MS: "0" } });
    try {
      const body = { model: "svc-latest", state: "Where is my parcel?", questions: { q: { type: "noul", instructions: "Is this about shipping?" } } };
      const first = await post(svc, "/v1/systemone", body);
      assert.equal(first.status, 200);
      const file = join(svc.dataDir, "svc.sqlite");
      const db = new Database(file);
      const schema = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'usage'").pluck().get() as string;
      const index = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'usage_key_at'").pluck().get() as string;
      const saved = db.prepare("SELECT * FROM usage").all();
      db.exec("DROP TABLE usage");
      const failed = await post(svc, "/v1/systemone", body);
      assert.equal(failed.status, 500);
      assert.deepEqual(failed.body, { error: { type: "api_error", message: "Internal error; the request was not billed." }, detail: [] });
      assert.match(failed.headers.get("x-request-id") ?? "", /^req_[0-9a-f]{24}$/);
      db.exec(schema);
      db.exec(index);
      const insert = db.prepare("INSERT INTO usage VALUES (@request_id, @key_id, @endpoint, @model, @input_tokens, @at, @cached)");
      for (const r of saved) insert.run(r);
      db.close();
      const again = await post(svc, "/v1/systemone", body);
      assert.equal(again.status, 200);
      const usage = await cli(["usage", "--json"], { SVC_DATA_DIR: svc.dataDir });
      const mine = JSON.parse(usage.stdout).keys[0];
      assert.equal(mine.requests, 2);
      assert.equal(mine.input_tokens, first.body.usage.input_tokens + again.body.usage.input_tokens);
      const ids = rows(file).ids;
      assert.deepEqual(ids, [first.headers.get("x-request-id"), again.headers.get("x-request-id")]);
      assert.ok(!ids.includes(failed.headers.get("x-request-id")!));
      assert.match(svc.output(), /usage record not written: no such table: usage/);
    } finally {
      await svc.stop();
    }
  });
});
