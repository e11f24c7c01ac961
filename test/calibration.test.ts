import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, get, post, startService, tempDir, type Service } from "./helpers/service.js";

// Calibration from a key's own labels: fitted per type on two thirds of the examples, reported on the held-out third,
// selected by name in a request, private to the key.

let svc: Service;
before(async () => {
  svc = await startService();
});
after(async () => {
  await svc.stop();
});

const happy = [
  "Absolutely love it, works perfectly and arrived a day early. Thank you!",
  "Best purchase this year, the quality is outstanding and support was lovely.",
  "Everything was perfect, I will definitely order again.",
  "Fantastic service, friendly staff and the food was delicious.",
  "Super happy with the new phone, battery lasts two days.",
  "Great experience from start to finish, highly recommended.",
  "The repair was quick and free, I am delighted.",
  "Wonderful hotel, spotless room and a great breakfast.",
  "Brilliant app, it saves me an hour every day.",
  "Thank you so much, the refund arrived already and the team was kind.",
];
const angry = [
  "Terrible. It broke after one day and nobody answers my emails.",
  "Worst order ever, wrong size, late, and the box was crushed.",
  "I am furious, you charged me three times and ignore my complaints.",
  "Awful food, cold and salty, and we waited an hour.",
  "The app crashes every time I open it, completely useless.",
  "Never again. Rude staff and a dirty room.",
  "Still no refund after six weeks, this is a scam.",
  "The laptop died in a week and the warranty was refused.",
  "Disgusting service, they hung up on me twice.",
  "Horrible experience, I want my money back now.",
];
const unclear = [
  "The parcel arrived on Tuesday.",
  "I ordered the blue one.",
  "We stayed two nights in room 12.",
  "The invoice number is 4471.",
  "My sister recommended this shop.",
  "It comes in three sizes.",
  "I called on Monday morning.",
  "The store opens at nine.",
  "I paid by card.",
  "The manual is in German.",
];

/** Clear cases with their right answers, and flat statements labelled by this caller's own convention ("happy"). */
function examples(): unknown[] {
  const out: unknown[] = [];
  const ask = { type: "noul", instructions: "Is the customer happy?" };
  for (const s of happy) out.push({ state: s, question: ask, answer: true });
  for (const s of angry) out.push({ state: s, question: ask, answer: false });
  for (const s of unclear) out.push({ state: s, question: ask, answer: true });
  const route = { type: "choice", question: "Which team should handle this?", options: { billing: "payments, charges, refunds", technical: "bugs, crashes, errors", delivery: "shipping and parcels" } };
  out.push({ state: "You charged me twice this month, please refund one payment.", question: route, answer: "billing" });
  out.push({ state: "The app crashes when I open the settings page.", question: route, answer: "technical" });
  out.push({ state: "My parcel has been stuck at the depot for a week.", question: route, answer: "delivery" });
  out.push({ state: "Why is there an extra fee on my invoice?", question: route, answer: "billing" });
  out.push({ state: "Error 500 every time I log in.", question: route, answer: "technical" });
  out.push({ state: "The courier left the box at the wrong address.", question: route, answer: "delivery" });
  return out;
}

type Fitted = {
  name: string;
  hash: string;
  model_hash: string;
  examples: { fit: number; held_out: number };
  min_confidence: Record<string, number>;
  report: { before: Record<string, { n: number; accuracy: number; ece: number; coverage: number; answered_accuracy: number }>; after: Record<string, { n: number; accuracy: number; ece: number; coverage: number; answered_accuracy: number }> };
  reliability_svg?: string;
};

test("a key fits a calibration over HTTP: per type, on two thirds, reported before and after on the held-out third", async () => {
  const r = await post(svc, "/v1/calibrations", { name: "reviews-v1", target_accuracy: 0.9, examples: examples() });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const f = r.body as Fitted;
  assert.equal(f.name, "reviews-v1");
  assert.match(f.hash, /^[0-9a-f]{12}$/);
  assert.equal(f.examples.fit + f.examples.held_out, 36);
  assert.ok(f.examples.held_out >= 6 && f.examples.held_out <= 18, JSON.stringify(f.examples));
  assert.match(f.reliability_svg ?? "", /^<svg [^>]*>.*held-out examples/s);
  const b = f.report.before.all;
  const a = f.report.after.all;
  assert.equal(b.n, f.examples.held_out);
  assert.equal(a.n, b.n);
  for (const m of [a, b]) for (const v of [m.accuracy, m.ece, m.coverage]) assert.ok(v >= 0 && v <= 1, JSON.stringify(m));
  console.log(`held out: before ${JSON.stringify(b)}; after ${JSON.stringify(a)}`);
  // The request names it: answers say which calibration they used, and the numbers follow it.
  const ask = { model: "svc-latest", calibration: "reviews-v1", state: "The invoice number is 8812.", questions: { q: { type: "noul", instructions: "Is the customer happy?" } } };
  const withCal = await post(svc, "/v1/systemone", ask);
  assert.equal(withCal.status, 200, JSON.stringify(withCal.body));
  assert.equal(withCal.headers.get("x-calibration"), `reviews-v1@${f.hash}`);
  const { calibration: _c, ...plain } = ask;
  const without = await post(svc, "/v1/systemone", plain);
  assert.equal(without.headers.get("x-calibration"), "default");
  const d = await post(svc, "/v1/decide", { model: "svc-latest", calibration: "reviews-v1", state: "The invoice number is 8812.", questions: { q: { type: "binary", question: "Is the customer happy?" } } });
  assert.equal(d.status, 200);
  const da = d.body as { calibration: string; answers: { q: { min_confidence: number } } };
  assert.equal(da.calibration, `reviews-v1@${f.hash}`);
  assert.equal(da.answers.q.min_confidence, f.min_confidence.noul);
  const list = await get(svc, "/v1/calibrations");
  assert.deepEqual((list.body as { calibrations: { name: string }[] }).calibrations.map((c) => c.name), ["reviews-v1"]);
});

test("calibrations belong to their key: another key neither lists nor uses them", async () => {
  const r = await post(svc, "/v1/calibrations", { name: "mine", examples: examples() });
  assert.equal(r.status, 200);
  const created = await cli(["keys", "create", "--name", "other"], { SVC_DATA_DIR: svc.dataDir });
  const otherKey = created.stdout.trim().split("\n").at(-1)!;
  assert.match(otherKey, /^svc_/);
  const as = { url: svc.url, key: otherKey };
  const list = await get(as, "/v1/calibrations");
  assert.equal(list.status, 200);
  assert.deepEqual((list.body as { calibrations: unknown[] }).calibrations, []);
  const use = await post(as, "/v1/systemone", { model: "svc-latest", calibration: "mine", state: "x", questions: { q: { type: "noul", instructions: "Is it?" } } });
  assert.equal(use.status, 422);
  assert.equal((use.body as { error: { message: string } }).error.message, "calibration: This key has no calibration named 'mine'.");
});

test("bad calibration input is a 422 naming the problem", async () => {
  const few = await post(svc, "/v1/calibrations", { name: "x", examples: examples().slice(0, 19) });
  assert.equal(few.status, 422);
  assert.equal((few.body as { error: { message: string } }).error.message, "examples: A calibration needs at least 20 labeled examples; got 19.");
  const wrong = examples();
  (wrong[30] as { answer: string }).answer = "sales";
  const notOption = await post(svc, "/v1/calibrations", { name: "x", examples: wrong });
  assert.equal(notOption.status, 422);
  assert.equal((notOption.body as { error: { message: string } }).error.message, "examples.30.answer: The right answer must be one of the option keys (billing, technical, delivery).");
  const mixed = examples().map((e, i) => ({ ...(e as object), model: i === 3 ? "svc-preview" : "svc-latest" }));
  const m = await post(svc, "/v1/calibrations", { name: "x", examples: mixed });
  assert.equal(m.status, 422);
  assert.match((m.body as { error: { message: string } }).error.message, /^examples: The examples name different models \(svc-1\.2\.0, svc-preview\)/);
  const badName = await post(svc, "/v1/calibrations", { name: "no spaces", examples: examples() });
  assert.equal(badName.status, 422);
  const de = await post(svc, "/v1/calibrations", { name: "x", examples: [] }, { "accept-language": "de" });
  assert.equal((de.body as { error: { message: string } }).error.message, "examples: Eine Kalibrierung braucht mindestens 20 beschriftete Beispiele; erhalten: 0.");
});

test("svc calibrate fits from a file for a key, stores it where the server finds it, and writes the reliability diagram", async () => {
  const dir = tempDir();
  const data = join(dir, "labels.jsonl");
  writeFileSync(data, examples().map((e) => JSON.stringify(e)).join("\n") + "\n");
  const keys = await cli(["keys", "list"], { SVC_DATA_DIR: svc.dataDir });
  const prefix = /^\S+\s+bootstrap\s+(\S+)/m.exec(keys.stdout)![1];
  const plot = join(dir, "rel.svg");
  const r = await cli(["calibrate", "--data", data, "--name", "from-cli", "--key", prefix, "--plot", plot], { SVC_DATA_DIR: svc.dataDir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^calibration from-cli@[0-9a-f]{12} for svc-1\.2\.0 \(model files [0-9a-f]{12}\): \d+ examples fitted, \d+ held out\n/);
  assert.match(r.stdout, /\nall +\d+ +\d/);
  const use = await post(svc, "/v1/systemone", { model: "svc-latest", calibration: "from-cli", state: "x", questions: { q: { type: "noul", instructions: "Is it?" } } });
  assert.equal(use.status, 200, JSON.stringify(use.body));
  assert.match(use.headers.get("x-calibration") ?? "", /^from-cli@[0-9a-f]{12}$/);
});
