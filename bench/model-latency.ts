/**
 * Latency of the built-in model, called directly (plan + run) and through HTTP: one choice question with 4 options,
 * then 1..64 questions × 4 options over a ~200-token state and one question with 2..255 options (options of about 26
 * tokens; one row of 255 labels of three words, without descriptions). Every request uses texts never seen before
 * (state, questions and options carry a fresh nonce or fresh labels), but the last: 255 options that every
 * request of that row asks again (a fixed intent list over new messages), whose texts are read once and kept. The cost model is checked with a
 * least-squares fit of time against the tokens the model reads: state + Σ(question + option) (each text once,
 * specials included), and RSS after load is reported.
 *
 *   npm run bench:model [-- --reps 30] [-- --baseline DIR]
 *
 * --baseline DIR: an earlier checkout of svc (built, with its node_modules) whose own `dist/bench/model-latency.js`
 * is run first in this same run, so both models are measured on the machine in the same state; its JSON result
 * is printed beside this one.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseSystemOne } from "../src/api/systemone.js";
import { createEngine } from "../src/engine/registry.js";
import type { Engine } from "../src/engine/engine.js";
import { DeciderEngine } from "../src/engine/decider/decider-engine.js";
import { questionTexts } from "../src/engine/decider/texts.js";
import { post } from "../test/helpers/service.js";
import { fitLine, header, machine, numberFlag, percentile, printTable, round, startInProcess, writeResult } from "./lib.js";

let counter = 0;
const fresh = (): string => `${Date.now().toString(36)}${(counter++).toString(36)}`;

const SENTENCES = [
  "I ordered a pair of running shoes last week and the parcel arrived this morning.",
  "The box was crushed on one side and one shoe is a full size larger than the other.",
  "I have been a customer for six years and this is the first time something like this happened.",
  "Could you send the right size quickly, because I am running a half marathon in ten days?",
  "If that is not possible I would rather get my money back than wait several weeks.",
  "I also noticed that the invoice lists a different colour from the one I picked at checkout.",
  "Please let me know whether I need to print a return label or whether a courier will collect it.",
  "My phone number is on the order and I am at home most afternoons this week.",
  "Thanks in advance for sorting this out, I really like the brand and want to keep buying from you.",
];

/** Words of the short labels (three drawn at random per label: about a million labels, so a drawn one is new). */
const WORDS = (
  "account address alarm balance bank bill booking budget card cancel change charge check claim code complaint " +
  "contract coupon credit delay delivery deposit device discount email error exchange fee flight form fraud gift " +
  "hotel insurance invoice item limit loan login loyalty meeting message mobile order package parcel password " +
  "payment pension phone pickup plan points price profile purchase question rate receipt refund reminder rental " +
  "repair report request reservation return review salary schedule seat security service shipping signup size " +
  "statement status stock subscription support tax ticket tip transfer travel trip update upgrade voucher wallet " +
  "warranty weather"
).split(" ");

/** `n` distinct labels of three random words each (the way intent lists name their labels), none described. */
function shortLabels(n: number): Record<string, null> {
  const labels: Record<string, null> = {};
  const word = (): string => WORDS[Math.floor(Math.random() * WORDS.length)];
  while (Object.keys(labels).length < n) labels[`${word()} ${word()} ${word()}`] = null;
  return labels;
}

/**
 * A state of about `tokens` tokens and `questions` choice questions of `options` options, every text new; with
 * `repeated`, only the state is new and the questions and options are those of every other such request; with
 * `short`, each option is a label of three words without a description (otherwise a key and a sentence with a nonce,
 * about 26 tokens).
 */
function body(questions: number, options: number, stateTokens: number, repeated = false, short = false): { model: string; state: string; questions: Record<string, unknown> } {
  const stateNonce = fresh();
  const nonce = repeated ? "same" : stateNonce;
  const parts: string[] = [`Case ${stateNonce}.`];
  for (let i = 0; parts.join(" ").length < stateTokens * 4.2; i++) parts.push(SENTENCES[i % SENTENCES.length]);
  const qs: Record<string, unknown> = {};
  for (let q = 0; q < questions; q++) {
    const criteria: Record<string, string | null> = short
      ? shortLabels(options)
      : Object.fromEntries(Array.from({ length: options }, (_, o) => [`option_${o}_${nonce}`, `answer number ${o} for case ${nonce} question ${q}`]));
    qs[`q${q}`] = { type: "choice", instructions: `Which answer fits case ${nonce} best, for question ${q}?`, criteria };
  }
  return { model: "svc-latest", state: parts.join(" "), questions: qs };
}

/**
 * Tokens the model reads once each: the state, every question and every option (specials included); with `seen`,
 * the state alone (its questions and options were read by an earlier request and kept).
 */
function readTokens(engine: Engine, req: ReturnType<typeof parseSystemOne>, seen = false): number {
  if (!(engine instanceof DeciderEngine)) return 0;
  let n = engine.tokenize(req.state, 254).length + 2;
  if (seen) return n;
  for (const q of req.questions) {
    const t = questionTexts(q);
    n += engine.tokenize(t.question, 128).length + 2;
    for (const s of t.segments) n += engine.tokenize(s, 64).length + 2;
  }
  return n;
}

async function direct(engine: Engine, b: ReturnType<typeof body>, seen = false): Promise<{ ms: number; pairs: number; tokens: number; read: number }> {
  const t0 = performance.now();
  const req = parseSystemOne(b);
  const plan = engine.plan(req.state, req.questions);
  await engine.run(plan);
  const ms = performance.now() - t0;
  return { ms, pairs: plan.questions.reduce((s, q) => s + q.pairTokens.length, 0), tokens: plan.inputTokens, read: readTokens(engine, req, seen) };
}

async function main(): Promise<void> {
  const m = machine();
  header("bench:model: built-in model latency (sequential requests, every text new)", m);
  const reps = numberFlag("reps", 30);
  const at = process.argv.indexOf("--baseline");
  let baseline: unknown = null;
  if (at >= 0) {
    const dir = resolve(process.argv[at + 1]);
    console.log(`baseline: ${dir} (its own bench, same run, before this model)`);
    execFileSync(process.execPath, [join(dir, "dist", "bench", "model-latency.js"), "--paths", "onnx,cross", "--reps", String(reps)], { cwd: dir, stdio: "inherit" });
    baseline = JSON.parse(readFileSync(join(dir, "bench", "results", "model-latency.json"), "utf8"));
  }
  const engine = createEngine({ workers: 0 });
  const t0 = performance.now();
  await engine.load();
  const loadMs = performance.now() - t0;
  const rssLoadedMiB = process.memoryUsage().rss / 2 ** 20;
  for (let i = 0; i < 5; i++) await direct(engine, body(1, 4, 60)); // warm-up: JIT, worker start-up

  const single: number[] = [];
  for (let i = 0; i < reps; i++) single.push((await direct(engine, body(1, 4, 60))).ms);
  const repeated: number[] = [];
  for (let i = 0; i < reps; i++) repeated.push((await direct(engine, body(1, 4, 60, true))).ms);
  const svc = await startInProcess(engine);
  const http: number[] = [];
  for (let i = 0; i < reps + 5; i++) {
    const t = performance.now();
    const r = await post(svc, "/v1/systemone", body(1, 4, 60));
    if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body)}`);
    if (i >= 5) http.push(performance.now() - t);
  }
  await svc.close();
  const stats = (xs: number[]) => ({ p50: round(percentile(xs, 50)), p95: round(percentile(xs, 95)) });
  const singleRows = [{ path: "direct", ...stats(single) }, { path: "HTTP", ...stats(http) }, { path: "direct, question and options seen before", ...stats(repeated) }];
  console.log(`1 choice question, 4 options, ~60-token state, every text new unless said, ${reps} requests each (ms):`);
  printTable(singleRows.map((r) => ({ path: r.path, "p50 ms": r.p50, "p95 ms": r.p95 })));

  const configs: { questions: number; options: number; state: number; repeated?: boolean; short?: boolean }[] = [
    ...[1, 4, 16, 64].map((q) => ({ questions: q, options: 4, state: 200 })),
    ...[2, 10, 50, 255].map((o) => ({ questions: 1, options: o, state: 60 })),
    { questions: 1, options: 4, state: 240 },
    // 255 new labels of a few words each, as intent lists name them
    { questions: 1, options: 255, state: 60, short: true },
    // a fixed list of 255 intents asked of every new message: only the state is new
    { questions: 1, options: 255, state: 60, repeated: true },
  ];
  const sweep = [];
  for (const c of configs) {
    const n = c.repeated ? reps : Math.max(3, Math.min(reps, Math.floor(400 / (c.questions * c.options))));
    const ms: number[] = [];
    if (c.repeated) await direct(engine, body(c.questions, c.options, c.state, true)); // its options read once, untimed
    let info = { pairs: 0, tokens: 0, read: 0 };
    for (let i = 0; i < n; i++) {
      const r = await direct(engine, body(c.questions, c.options, c.state, c.repeated, c.short), c.repeated);
      ms.push(r.ms);
      info = r;
    }
    sweep.push({ questions: c.questions, options: c.options, seenBefore: c.repeated === true, shortLabels: c.short === true, stateTokens: c.state, requests: n, pairs: info.pairs, billedTokens: info.tokens, readTokens: info.read, p50Ms: round(percentile(ms, 50)), p95Ms: round(percentile(ms, 95)) });
  }
  await engine.close();
  const fitted = sweep.filter((r) => !r.seenBefore); // the time of kept texts' scoring is not in a token count
  const fit = fitLine(fitted.map((r) => r.readTokens), fitted.map((r) => r.p50Ms));
  printTable(sweep.map((r) => ({ "q × o": `${r.questions} × ${r.options}${r.seenBefore ? ", seen" : ""}${r.shortLabels ? ", short labels" : ""}`, state: r.stateTokens, pairs: r.pairs, "read tokens": r.readTokens, n: r.requests, "p50 ms": r.p50Ms, "p95 ms": r.p95Ms })));
  console.log(`\nfit: time ≈ ${round(fit.a)} ms + ${round(fit.b, 4)} ms × read tokens (r² ${round(fit.r2, 3)})`);
  console.log(`RSS after load: ${round(rssLoadedMiB, 1)} MiB; peak ${round(process.resourceUsage().maxRSS / 1024, 1)} MiB; load ${round(loadMs)} ms`);
  writeResult("model-latency", m, {
    engine: engine.info.backend,
    rssMiB: { afterLoad: round(rssLoadedMiB, 1), peak: round(process.resourceUsage().maxRSS / 1024, 1) },
    modelLoadMs: round(loadMs),
    single: singleRows,
    sweep,
    fit: { aMs: round(fit.a), bMsPerReadToken: round(fit.b, 5), r2: round(fit.r2, 4) },
    baseline,
  });
}

await main();
