import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { killMidLoad, limitBurst, sustained, termMidLoad } from "./helpers/load.js";

// Short forms of bench/load.ts (npm run bench:load runs them longer and harder).
describe("under load", () => {
  test("sustained load: no 5xx, one usage row per 200, RSS steady", async (t) => {
    // 500 distinct states: real inference on each first sight, and the embedding cache can grow by at
    // most ~3.5 MB (bench:load runs with every state new, long enough to reach the cache's bound).
    // RSS climbs for the first ~15 s under load (V8 heap, model buffers) and then stays flat, so the
    // warm-up is 10 s.
    const r = await sustained({ concurrency: 16, warmupMs: 10_000, durationMs: 10_000, rssMargin: 0.15, variety: 500 });
    assert.ok(r.ok > 50, `only ${r.ok} requests succeeded`);
    t.diagnostic(JSON.stringify({ ...r, problems: undefined }));
    assert.deepEqual(r.problems, [], JSON.stringify({ ...r, problems: undefined }));
  });

  test("SIGKILL mid-load: every 200 has its usage row, the database is intact, a restart serves", async (t) => {
    const r = await killMidLoad({ concurrency: 16, loadMs: 3000 });
    t.diagnostic(JSON.stringify({ ...r, problems: undefined }));
    assert.deepEqual(r.problems, [], JSON.stringify({ ...r, problems: undefined }));
  });

  test("SIGTERM mid-load: in-flight requests finish with 200, later ones are refused or 503, exit 0", async (t) => {
    const r = await termMidLoad({ concurrency: 16, loadMs: 2500, maxExitMs: 12_000 });
    assert.ok(r.inFlight > 0, "no request was in flight at SIGTERM");
    t.diagnostic(JSON.stringify({ ...r, problems: undefined }));
    assert.deepEqual(r.problems, [], JSON.stringify({ ...r, problems: undefined }));
  });

  test("a key's own per-minute limit of 20 under 35 concurrent requests: exactly 20 pass", async (t) => {
    const r = await limitBurst({ limit: 20, extra: 15 });
    t.diagnostic(JSON.stringify({ ...r, problems: undefined }));
    assert.deepEqual(r.problems, [], JSON.stringify({ ...r, problems: undefined }));
  });
});
