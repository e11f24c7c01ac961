import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";
import { signTest, tallies, tally } from "../src/eval/compare.js";
import { cli, ROOT } from "./helpers/service.js";

test("the sign test's two-sided p-values are the exact binomial tails", () => {
  assert.equal(signTest(0, 0), 1);
  assert.equal(signTest(0, 10), 2 / 1024);
  assert.equal(signTest(10, 10), 2 / 1024);
  assert.ok(Math.abs(signTest(5, 20) - (2 * 21700) / 1048576) < 1e-12);
  assert.ok(Math.abs(signTest(15, 20) - (2 * 21700) / 1048576) < 1e-12);
  assert.equal(signTest(3, 7), 1);
  assert.ok(Math.abs(signTest(40, 100) - 0.0568879336) < 1e-9);
});

test("a tally counts each model's right answers and the questions only one of them gets right", () => {
  const pairs = [
    { lang: "en", kind: "noul", baseline: true, candidate: true },
    { lang: "en", kind: "score", baseline: true, candidate: false },
    { lang: "de", kind: "noul", baseline: false, candidate: true },
    { lang: "de", kind: "noul", baseline: false, candidate: true },
    { lang: "de", kind: "choice", baseline: false, candidate: false },
  ];
  assert.deepEqual(tally(pairs), { n: 5, baseline: 2, candidate: 3, gained: 2, lost: 1, p: 1 });
  assert.deepEqual(
    tallies(pairs).map((r) => [r.group, r.tally.n, r.tally.gained, r.tally.lost]),
    [["de", 3, 2, 0], ["en", 2, 0, 1], ["choice", 1, 0, 0], ["noul", 3, 2, 0], ["score", 1, 0, 1], ["all", 5, 2, 1]],
  );
});

test("compare-models on the real model against itself: nothing gained or lost, and each side right as often as svc eval says", async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(ROOT, "dist", "scripts", "compare-models.js"), "--candidate", "models/builtin", "--data", "eval/first-hour", "--data", "eval/dev:test", "--json"],
    { maxBuffer: 1 << 24 },
  );
  const r = JSON.parse(stdout) as { sets: { set: string; rows: { group: string; tally: { n: number; baseline: number; candidate: number; gained: number; lost: number; p: number } }[] }[] };
  assert.deepEqual(r.sets.map((s) => s.set), ["eval/first-hour", "eval/dev:test", "together"]);
  const all = (set: number) => r.sets[set].rows.find((x) => x.group === "all")!.tally;
  for (const [i, dir, split] of [[0, "eval/first-hour", "all"], [1, "eval/dev", "test"]] as const) {
    const e = await cli(["eval", "--dir", join(ROOT, dir), "--split", split, "--json"]);
    assert.equal(e.code, 0, e.stderr);
    const ev = JSON.parse(e.stdout) as { items: number; overall: { accuracy: number } };
    assert.deepEqual(all(i), { n: ev.items, baseline: Math.round(ev.overall.accuracy * ev.items), candidate: Math.round(ev.overall.accuracy * ev.items), gained: 0, lost: 0, p: 1 });
  }
  assert.equal(all(2).n, all(0).n + all(1).n);
});
