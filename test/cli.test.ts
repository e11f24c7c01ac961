import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, post, ROOT, startService, tempDir, tinySet } from "./helpers/service.js";

describe("svc CLI", () => {
  test("ask answers one question of each type from the command line", async () => {
    const env = { SVC_DATA_DIR: tempDir() };
    const c = await cli(["ask", "--state", "I was charged twice on my card", "--choice", "What is this about?", "--options", "billing,technical,shipping"], env);
    assert.equal(c.code, 0, c.stderr);
    const choice = JSON.parse(c.stdout);
    assert.equal(choice.answer, "billing");
    assert.deepEqual(Object.keys(choice.probabilities), ["billing", "technical", "shipping"]);
    assert.ok(Number.isInteger(choice.input_tokens) && choice.input_tokens > 0);
    const n = await cli(["ask", "--state", "The parcel arrived today.", "--noul", "Was the package delivered?"], env);
    assert.equal(n.code, 0, n.stderr);
    const noul = JSON.parse(n.stdout);
    assert.ok(noul.noul >= 0 && noul.noul <= 1);
    const s = await cli(["ask", "--state", "This is outrageous!", "--score", "How angry?", "--levels", "calm,annoyed,furious"], env);
    assert.equal(s.code, 0, s.stderr);
    const score = JSON.parse(s.stdout);
    assert.ok(score.answer >= 0 && score.answer <= 2);
    const bad = await cli(["ask", "--state", "x"], env);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, "svc: ask needs one of --noul, --choice or --score\n");
  });

  test("eval prints accuracy, calibration and abstention, with the built-in model and with an ONNX model folder", async () => {
    const dir = tinySet();
    const builtin = await cli(["eval", "--dir", dir, "--json"], { SVC_DATA_DIR: tempDir() });
    assert.equal(builtin.code, 0, builtin.stderr);
    const r = JSON.parse(builtin.stdout);
    assert.equal(r.backend, "svc-decider-e5s");
    assert.equal(r.items, 3);
    assert.deepEqual(Object.keys(r.by_lang).sort(), ["en", "es"]);
    assert.equal(r.by_kind.choice.n, 1);
    assert.equal(r.by_kind.choice.accuracy, 1);
    assert.equal(r.curve[0].threshold, 0);
    assert.equal(r.curve[0].coverage, 1);
    // Beside each ECE, the floor a perfectly calibrated model would show with so few questions.
    assert.ok(r.overall.ece_floor > 0 && r.overall.ece_floor < 1, String(r.overall.ece_floor));
    assert.ok(r.by_lang.es.all.ece_floor > 0, String(r.by_lang.es.all.ece_floor));
    const onnx = await cli(["eval", "--dir", dir, "--json"], { SVC_DATA_DIR: tempDir(), SVC_MODEL: join(ROOT, "test", "fixtures", "tiny-nli") });
    assert.equal(onnx.code, 0, onnx.stderr);
    assert.equal(JSON.parse(onnx.stdout).backend, "onnx:tiny-nli");
    const text = await cli(["eval", "--dir", dir, "--threshold", "0.3"], { SVC_DATA_DIR: tempDir() });
    assert.match(text.stdout, /^model svc-decider-e5s, 3 questions \(split: all\)/);
    assert.match(text.stdout, /\n {5}0\.30 .*<- --threshold\n/);
    // A threshold off the curve's grid is printed with the decimals that tell it from its neighbours.
    const between = await cli(["eval", "--dir", dir, "--threshold", "0.148"], { SVC_DATA_DIR: tempDir() });
    assert.match(between.stdout, /\n {5}0\.10 .*\n {4}0\.148 .*<- --threshold\n {5}0\.15 /);
    assert.match(text.stdout, /\nlang +noul +choice +score +all +ECE +floor\n/);
    assert.match(text.stdout, /\nall +.*%.* 0\.\d{3}  0\.\d{3}\n/);
  });

  test("eval --descriptions answers each described question as written and without its descriptions, side by side", async () => {
    const item = (id: string, lang: string, type: string, instructions: string, state: string, criteria: unknown, label: unknown) =>
      ({ id, group: id, lang, domain: "support_routing", state, type, instructions, criteria, label });
    const described = [
      item("d1", "en", "choice", "What is this about?", "My card was charged twice for one order.", { billing: "payments, charges, refunds", shipping: "delivery of parcels" }, "billing"),
      item("d2", "en", "noul", "Does the customer want a refund?", "Please send my money back, the kettle leaks.", { true: "The customer asks for their money back", false: "The customer does not ask for money back" }, true),
      item("d3", "es", "noul", "¿Pide el cliente un reembolso?", "El pedido llegó bien, gracias.", { true: "El cliente pide que le devuelvan el dinero" }, false),
    ];
    const undescribed = [
      item("u1", "en", "noul", "Is the parcel late?", "The parcel is a week late.", null, true),
      item("u2", "en", "choice", "Which team?", "The app crashes on start.", { billing: null, technical: null }, "technical"),
      item("u3", "en", "score", "How urgent?", "Nothing is broken.", ["low", "high"], 0),
    ];
    const stripped = [
      { ...described[0], criteria: { billing: null, shipping: null } },
      { ...described[1], criteria: null },
      { ...described[2], criteria: null },
    ];
    const write = (rows: unknown[]): string => {
      const dir = join(tempDir(), "set");
      mkdirSync(dir);
      writeFileSync(join(dir, "set.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
      return dir;
    };
    const env = { SVC_DATA_DIR: tempDir() };
    const r = await cli(["eval", "--descriptions", "--dir", write([...described, ...undescribed]), "--json"], env);
    assert.equal(r.code, 0, r.stderr);
    const pairs = JSON.parse(r.stdout);
    // Only the three questions with descriptions or meanings are compared; scores and bare questions are not.
    assert.equal(pairs.questions, 3);
    assert.deepEqual(Object.keys(pairs.by_lang), ["en", "es", "all"]);
    assert.equal(pairs.by_lang.en.choice.n, 1);
    assert.equal(pairs.by_lang.en.noul.n, 1);
    assert.equal(pairs.by_lang.es.noul.n, 1);
    assert.deepEqual(pairs.by_lang.es.choice, { n: 0, described: null, bare: null });
    // Each side is exactly what plain `svc eval` gives on the questions as written and as stripped.
    const plain = async (rows: unknown[]) => JSON.parse((await cli(["eval", "--dir", write(rows), "--json"], env)).stdout);
    const asWritten = await plain(described);
    const asBare = await plain(stripped);
    for (const lang of ["en", "es"]) {
      for (const kind of ["noul", "choice", "all"]) {
        assert.equal(pairs.by_lang[lang][kind].described, asWritten.by_lang[lang][kind].accuracy, `${lang} ${kind} described`);
        assert.equal(pairs.by_lang[lang][kind].bare, asBare.by_lang[lang][kind].accuracy, `${lang} ${kind} bare`);
      }
    }
    assert.equal(pairs.by_lang.all.all.described, asWritten.overall.accuracy);
    assert.equal(pairs.by_lang.all.all.bare, asBare.overall.accuracy);
    // --split keeps the questions of one half (by group): the two halves together are the whole set.
    const halves = await Promise.all(["fit", "test"].map(async (half) => {
      const h = await cli(["eval", "--descriptions", "--split", half, "--dir", write(described), "--json"], env);
      assert.equal(h.code, 0, h.stderr);
      return JSON.parse(h.stdout).questions as number;
    }));
    assert.equal(halves[0] + halves[1], 3);
    const text = await cli(["eval", "--descriptions", "--dir", write(described)], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /, 3 questions with descriptions \(split: all\), each answered as written and without them\n/);
    assert.match(text.stdout, /\nlang   noul {19}choice {17}all\n/);
    assert.match(text.stdout, /\nall +\d+\.\d% \/ +\d+\.\d% \(  2\)  +\d+\.\d% \/ +\d+\.\d% \(  1\)  +\d+\.\d% \/ +\d+\.\d% \(  3\)\n$/);
  });

  test("usage errors exit 1 with a message; help lists every command", async () => {
    const env = { SVC_DATA_DIR: tempDir() };
    const help = await cli(["help"], env);
    assert.equal(help.code, 0);
    for (const cmd of ["svc serve", "svc keys create", "svc keys list", "svc keys revoke", "svc usage", "svc ask", "svc models", "svc eval"]) {
      assert.ok(help.stdout.includes(cmd), cmd);
    }
    const unknown = await cli(["frobnicate"], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^svc: unknown command frobnicate\n/);
    const noName = await cli(["keys", "create"], env);
    assert.equal(noName.code, 1);
    // The first command that opens the store in a new data folder names that folder.
    assert.equal(noName.stderr, `svc: new key store in ${env.SVC_DATA_DIR} (set SVC_DATA_DIR to use another folder)\nsvc: keys create needs --name\n`);
    const badLimit = await cli(["keys", "create", "--name", "x", "--per-minute", "-3"], env);
    assert.equal(badLimit.code, 1);
    assert.equal(badLimit.stderr, "svc: --per-minute must be a whole number >= 0, got -3\n");
    const badMonth = await cli(["usage", "--month", "2026-13"], env);
    assert.equal(badMonth.code, 1);
    assert.equal(badMonth.stderr, "svc: --month must be YYYY-MM, got 2026-13\n");
    const noKey = await cli(["keys", "revoke", "ffffffff"], env);
    assert.equal(noKey.code, 1);
    assert.equal(noKey.stderr, "svc: no key with id or prefix ffffffff\n");
  });

  test("server-wide limits can come from the config file in the data dir; the environment wins over it", async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, "config.json"), JSON.stringify({ per_day: 1, per_minute: 0 }));
    const svc = await startService({ dataDir });
    const body = { model: "svc-latest", state: "hello", questions: { q: { type: "noul", instructions: "Is this a greeting?" } } };
    try {
      assert.equal((await post(svc, "/v1/systemone", body)).status, 200);
      const r = await post(svc, "/v1/systemone", body);
      assert.equal(r.status, 429);
      assert.equal(r.body.error.limit, "per_day");
    } finally {
      await svc.stop();
    }
    const envWins = await startService({ dataDir, key: svc.key, env: { SVC_PER_DAY: "0" } });
    try {
      assert.equal((await post(envWins, "/v1/systemone", body)).status, 200);
    } finally {
      await envWins.stop();
    }
    writeFileSync(join(dataDir, "config.json"), "{ not json");
    const broken = await cli(["keys", "list"], { SVC_DATA_DIR: dataDir });
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /^svc: cannot read config file .*config\.json: /);
  });
});
