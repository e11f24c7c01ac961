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

// A support desk's own routing labels: clear tickets, which the model routes well and surely, and vague follow-ups
// ("Help!", "This is the third time I write to you.") that the desk routes by its own habits and the model guesses at
// with middling confidence. At the model's default threshold those guesses are answered; a calibration fitted for
// 90% right must leave them out.
const clearTickets: Record<string, string[]> = {
  billing: [
    "You charged me twice this month, please refund one payment.",
    "Why is there an extra fee on my invoice?",
    "My card was debited but the order shows unpaid.",
    "I want a refund for the subscription I cancelled last week.",
    "The price on my bill is higher than the one on your website.",
    "Please send me a corrected invoice with my company VAT number.",
    "I was billed for the premium plan but I only signed up for basic.",
    "Can I pay the remaining balance in two instalments?",
    "The discount code was not applied to my payment.",
    "I see a charge from you that I do not recognise.",
  ],
  technical: [
    "The app crashes when I open the settings page.",
    "Error 500 every time I try to upload a photo.",
    "The website does not load on my phone since the update.",
    "Notifications stopped working after I installed the new version.",
    "The export button produces an empty file.",
    "Your API returns a timeout for every request since this morning.",
    "The page freezes when I scroll through my history.",
    "Sync between my laptop and tablet is broken.",
    "The video player shows a black screen with sound only.",
    "The search function returns no results even for exact names.",
  ],
  delivery: [
    "My parcel has been stuck at the depot for a week.",
    "The courier left the box at the wrong address.",
    "Tracking has not updated in five days.",
    "The package arrived damaged and half the items are missing.",
    "When will my order be shipped? It has been ten days.",
    "The driver never came although I was home all day.",
    "I received someone else's parcel instead of mine.",
    "Can you change the delivery address for my order that has not shipped yet?",
    "The delivery was marked as completed but nothing arrived.",
    "My order was sent to my old address.",
  ],
  account: [
    "I cannot log in, the password reset email never arrives.",
    "Please delete my account and all my data.",
    "How do I change the email address on my profile?",
    "My account was locked after too many attempts.",
    "Someone else logged into my account from another country.",
    "I want to merge my two accounts into one.",
    "The two-factor code is not accepted when I sign in.",
    "How do I change my username?",
    "I forgot which email I used to register.",
    "Please update the phone number on my profile.",
  ],
};
const vagueTickets: [string, string][] = [
  ["Hello, I have a problem with my order, can someone call me?", "delivery"],
  ["It still does not work and I am losing patience.", "technical"],
  ["Nothing has changed since my last message.", "technical"],
  ["Please sort this out today.", "billing"],
  ["I paid for express shipping and the parcel is still not here.", "delivery"],
  ["The app charged me twice when it crashed during checkout.", "billing"],
  ["I cannot log in to see my invoices.", "account"],
  ["My order page shows an error so I do not know if it shipped.", "technical"],
  ["Your last email said it was fixed, but it is not.", "technical"],
  ["Can I get my money back for the lost parcel?", "delivery"],
  ["I moved house, what should I do?", "account"],
  ["Who do I talk to about this?", "account"],
  ["The thing I got is not what I expected.", "delivery"],
  ["Please check my case again, reference 88412.", "billing"],
  ["The website logged me out in the middle of paying.", "technical"],
  ["I want to cancel.", "account"],
  ["This is the third time I write to you.", "delivery"],
  ["Why did this happen?", "technical"],
  ["I have a question about my last order.", "billing"],
  ["Help!", "technical"],
];

function routingExamples(): unknown[] {
  const question = {
    type: "choice",
    instructions: "Which team should handle this ticket?",
    criteria: { billing: "payments, charges, refunds, invoices", technical: "bugs, crashes, errors", delivery: "shipping, parcels, couriers", account: "login, profile, personal data" },
  };
  const labeled: [string, string][] = [...Object.entries(clearTickets).flatMap(([team, states]) => states.map((s): [string, string] => [s, team])), ...vagueTickets];
  return labeled.map(([state, answer]) => ({ state, question, answer }));
}

test("on a desk's own labels where the default threshold is wrong, the fitted one is right on the held-out third", async () => {
  const r = await post(svc, "/v1/calibrations", { name: "desk-routing", target_accuracy: 0.95, examples: routingExamples() });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const f = r.body as Fitted;
  assert.equal(f.examples.fit + f.examples.held_out, 60);
  const before = f.report.before.choice;
  const after = f.report.after.choice;
  console.log(`desk routing, held out: before ${JSON.stringify(before)}; after ${JSON.stringify(after)}; min_confidence ${f.min_confidence.choice}`);
  assert.equal(before.n, f.examples.held_out);
  // The model's default answers most tickets, and too many of those answers are wrong for a desk that needs 95%.
  assert.ok(before.coverage >= 0.85, JSON.stringify(before));
  assert.ok(before.answered_accuracy < 0.95, JSON.stringify(before));
  // Fitted on the other two thirds, the threshold keeps what it answers of the held-out third at least 95% right,
  // and still answers a share of it (svc-1.6.0: 7 of the 23, all of them right).
  assert.ok(f.min_confidence.choice > 0.4, String(f.min_confidence.choice));
  assert.ok(after.answered_accuracy >= 0.95, JSON.stringify(after));
  assert.ok(after.coverage >= 0.2, JSON.stringify(after));
  // /v1/decide abstains under the fitted threshold where the default answered.
  const d = await post(svc, "/v1/decide", {
    model: "svc-latest",
    calibration: "desk-routing",
    state: "Please sort this out today.",
    questions: { team: { type: "choice", question: "Which team should handle this ticket?", options: { billing: "payments, charges, refunds, invoices", technical: "bugs, crashes, errors", delivery: "shipping, parcels, couriers", account: "login, profile, personal data" } } },
  });
  assert.equal(d.status, 200, JSON.stringify(d.body));
  const team = (d.body as { answers: { team: { abstained: boolean; min_confidence: number; confidence: number } } }).answers.team;
  assert.equal(team.min_confidence, f.min_confidence.choice);
  assert.equal(team.abstained, true, JSON.stringify(team));
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
  assert.match((m.body as { error: { message: string } }).error.message, /^examples: The examples name different models \(svc-1\.6\.0, svc-preview\)/);
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
  assert.match(r.stdout, /^calibration from-cli@[0-9a-f]{12} for svc-1\.6\.0 \(model files [0-9a-f]{12}\): \d+ examples fitted, \d+ held out\n/);
  assert.match(r.stdout, /\nall +\d+ +\d/);
  const use = await post(svc, "/v1/systemone", { model: "svc-latest", calibration: "from-cli", state: "x", questions: { q: { type: "noul", instructions: "Is it?" } } });
  assert.equal(use.status, 200, JSON.stringify(use.body));
  assert.match(use.headers.get("x-calibration") ?? "", /^from-cli@[0-9a-f]{12}$/);
});
