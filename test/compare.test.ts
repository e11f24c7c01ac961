import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signTest, tallies, tally } from "../src/eval/compare.js";
import { loadDataset } from "../src/eval/dataset.js";
import { splitOf } from "../src/eval/split.js";
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

test("compare-models against the real model made to answer every yes/no question yes: only noul answers move, and each side is right as often as it should be", async () => {
  // The candidate: the built-in model's files with a noul bias so large that every yes/no answer is "true".
  const dir = mkdtempSync(join(tmpdir(), "svc-compare-"));
  try {
    cpSync(join(ROOT, "models", "builtin"), dir, { recursive: true });
    const cal = JSON.parse(readFileSync(join(dir, "calibration.json"), "utf8")) as { noul: { b: number } };
    cal.noul.b = 1000;
    writeFileSync(join(dir, "calibration.json"), JSON.stringify(cal));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, "dist", "scripts", "compare-models.js"), "--candidate", dir, "--data", "eval/first-hour", "--data", "eval/dev:test", "--json"],
      { maxBuffer: 1 << 24 },
    );
    type Row = { group: string; tally: { n: number; baseline: number; candidate: number; gained: number; lost: number; p: number } };
    const r = JSON.parse(stdout) as { sets: { set: string; rows: Row[] }[] };
    assert.deepEqual(r.sets.map((s) => s.set), ["eval/first-hour", "eval/dev:test", "together"]);
    const row = (set: number, group: string) => r.sets[set].rows.find((x) => x.group === group)!.tally;
    for (const [i, data, split] of [[0, "eval/first-hour", "all"], [1, "eval/dev", "test"]] as const) {
      // the baseline is right exactly as often as `svc eval` says, per type
      const e = await cli(["eval", "--dir", join(ROOT, data), "--split", split, "--json"]);
      assert.equal(e.code, 0, e.stderr);
      const ev = JSON.parse(e.stdout) as { items: number; by_kind: Record<string, { n: number; accuracy: number }> };
      for (const kind of ["noul", "choice", "score"]) {
        const t = row(i, kind);
        assert.equal(t.n, ev.by_kind[kind].n, kind);
        assert.equal(t.baseline, Math.round(ev.by_kind[kind].accuracy * t.n), kind);
      }
      // choice and score answers are those of the baseline, question for question
      for (const kind of ["choice", "score"]) {
        const t = row(i, kind);
        assert.deepEqual([t.candidate, t.gained, t.lost], [t.baseline, 0, 0], kind);
      }
      // "yes" every time is right on exactly the questions labeled true
      const trueLabels = loadDataset(join(ROOT, data)).filter((it) => it.type === "noul" && it.label === true && (split === "all" || splitOf(it.group) === split)).length;
      const noul = row(i, "noul");
      assert.equal(noul.candidate, trueLabels);
      assert.equal(noul.gained - noul.lost, noul.candidate - noul.baseline);
      assert.equal(row(i, "all").gained, noul.gained);
      assert.equal(row(i, "all").n, ev.items);
    }
    assert.equal(row(2, "all").n, row(0, "all").n + row(1, "all").n);
    assert.equal(row(2, "all").gained, row(0, "all").gained + row(1, "all").gained);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("training-error answers labeled lines without a group with the real model, per language, type and training split, and lists the missed ones by file and line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-training-error-"));
  try {
    // the JSON state is in the training data's dev split: sha1 of {"ticket": 124, "text": "Doppelt abgebucht, bitte
    // zurückerstatten", "tags": ["billing", "urgent"]} (as Python's json.dumps writes it) is 0 mod 20; the other
    // states are not (13, 11 and 7)
    const lines = [
      { id: "t1", lang: "en", domain: "test", state: "The meeting on Friday was cancelled; nobody will come.", type: "noul", instructions: "Will the meeting take place?", criteria: null, label: false },
      { id: "t2", lang: "en", domain: "test", state: "Total outage: the payment service is down for every customer since 9:00.", type: "score", instructions: "How severe is this incident?", criteria: ["low", "medium", "high", "critical"], label: 3 },
      // labeled against the text on purpose: the model must miss it
      { id: "t3", lang: "de", domain: "test", state: "Ich möchte mein Passwort zurücksetzen, ich komme nicht mehr in mein Konto.", type: "choice", instructions: "Worum geht es?", criteria: { konto: "Anmeldung, Passwort", rechnung: "Zahlungen, Rechnungen" }, label: "rechnung" },
      { id: "t4", lang: "de", domain: "test", state: { ticket: 124, text: "Doppelt abgebucht, bitte zurückerstatten", tags: ["billing", "urgent"] }, type: "choice", instructions: "Worum geht es?", criteria: { konto: "Anmeldung, Passwort", rechnung: "Zahlungen, Rechnungen" }, label: "rechnung" },
    ];
    writeFileSync(join(dir, "a.jsonl"), lines.slice(0, 2).map((l) => JSON.stringify(l)).join("\n") + "\n");
    writeFileSync(join(dir, "b.jsonl"), "\n" + lines.slice(2).map((l) => JSON.stringify(l)).join("\n") + "\n");
    const wrong = join(dir, "wrong.jsonl");
    const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, "dist", "scripts", "training-error.js"), "--data", dir, "--wrong", wrong, "--json"]);
    type Count = { n: number; right: number };
    const r = JSON.parse(stdout) as { model: string; rows: { lang: string; kind: string; train: Count; dev: Count; sureWrong: number }[] };
    assert.match(r.model, /^svc-decider-e5s [0-9a-f]{12}$/);
    assert.deepEqual(
      r.rows.map((x) => [x.lang, x.kind, x.train, x.dev]),
      [
        ["de", "choice", { n: 1, right: 0 }, { n: 1, right: 1 }],
        ["en", "noul", { n: 1, right: 1 }, { n: 0, right: 0 }],
        ["en", "score", { n: 1, right: 1 }, { n: 0, right: 0 }],
      ],
    );
    const missed = readFileSync(wrong, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { where: string; split: string; id: string; label: unknown; answer: unknown; probability: number });
    assert.equal(missed.length, 1);
    assert.deepEqual([missed[0].where, missed[0].split, missed[0].id, missed[0].label, missed[0].answer], [`${dir}/b.jsonl:2`, "train", "t3", "rechnung", "konto"]);
    assert.ok(missed[0].probability > 0.5 && missed[0].probability <= 1, String(missed[0].probability));
    assert.equal(r.rows[0].sureWrong, missed[0].probability >= 0.7 ? 1 : 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
