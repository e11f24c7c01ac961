/**
 * Latency of the built-in model, called directly (plan + run) and once through HTTP for the overhead:
 * one choice question with 4 options, then 1..64 questions and 2..255 options, with a least-squares
 * fit time = a + b·pairs. Every cold request uses texts never seen before (the engine caches the
 * embeddings of repeated texts); the warm numbers repeat one request so that every embedding is cached.
 *
 *   npm run bench:model [-- --reps 40]
 */
import { parseSystemOne } from "../src/api/systemone.js";
import { createEngine } from "../src/engine/registry.js";
import type { Engine } from "../src/engine/engine.js";
import { post } from "../test/helpers/service.js";
import { choiceBody, fitLine, header, machine, numberFlag, percentile, printTable, round, startInProcess, writeResult } from "./lib.js";

let counter = 0;
const fresh = (): string => `${Date.now().toString(36)}${(counter++).toString(36)}`;

async function direct(engine: Engine, body: ReturnType<typeof choiceBody>): Promise<{ ms: number; pairs: number; tokens: number }> {
  const t0 = performance.now();
  const req = parseSystemOne(body);
  const plan = engine.plan(req.state, req.questions);
  await engine.run(plan);
  const ms = performance.now() - t0;
  return { ms, pairs: plan.questions.reduce((s, q) => s + q.pairTokens.length, 0), tokens: plan.inputTokens };
}

interface Sample {
  cold: number[];
  warm: number[];
  pairs: number;
  tokensPerPair: number;
}

async function measure(engine: Engine, questions: number, options: number, reps: number): Promise<Sample> {
  const cold: number[] = [];
  let last = choiceBody(fresh(), questions, options);
  let info = { pairs: 0, tokens: 0 };
  for (let i = 0; i < reps; i++) {
    last = choiceBody(fresh(), questions, options);
    const r = await direct(engine, last);
    cold.push(r.ms);
    info = r;
  }
  const warm: number[] = [];
  for (let i = 0; i < reps; i++) warm.push((await direct(engine, last)).ms);
  return { cold, warm, pairs: info.pairs, tokensPerPair: info.tokens / info.pairs };
}

async function main(): Promise<void> {
  const m = machine();
  header("bench:model: built-in model latency (sequential requests, fresh texts unless 'warm')", m);
  const reps = numberFlag("reps", 40);
  const engine = createEngine({ workers: 0 });
  const t0 = performance.now();
  await engine.load();
  const loadMs = performance.now() - t0;
  await measure(engine, 1, 4, 5); // warm-up: JIT, worker start-up

  // One request of one choice question (4 options, ~60-token state): direct and through HTTP.
  const single = await measure(engine, 1, 4, reps);
  const svc = await startInProcess(engine);
  const httpCold: number[] = [];
  const httpWarm: number[] = [];
  const timed = async (body: unknown, into: number[]): Promise<void> => {
    const t = performance.now();
    const r = await post(svc, "/v1/systemone", body);
    into.push(performance.now() - t);
    if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  };
  for (let i = 0; i < 5; i++) await timed(choiceBody(fresh()), []);
  for (let i = 0; i < reps; i++) await timed(choiceBody(fresh()), httpCold);
  const repeated = choiceBody(fresh());
  await timed(repeated, []); // its first request fills the cache
  for (let i = 0; i < reps; i++) await timed(repeated, httpWarm);
  await svc.close();

  const stats = (xs: number[]) => ({ p50: round(percentile(xs, 50)), p95: round(percentile(xs, 95)) });
  const singleRows = [
    { path: "direct, fresh texts", ...stats(single.cold) },
    { path: "direct, warm cache", ...stats(single.warm) },
    { path: "HTTP, fresh texts", ...stats(httpCold) },
    { path: "HTTP, warm cache", ...stats(httpWarm) },
  ];
  const overhead = {
    freshP50: round(percentile(httpCold, 50) - percentile(single.cold, 50)),
    warmP50: round(percentile(httpWarm, 50) - percentile(single.warm, 50)),
  };
  console.log(`1 choice question, 4 options, ${round(single.tokensPerPair, 1)} tokens per pair, ${reps} requests each (ms):`);
  printTable(singleRows.map((r) => ({ path: r.path, "p50 ms": r.p50, "p95 ms": r.p95 })));
  console.log(`HTTP overhead at p50: ${overhead.freshP50} ms (fresh), ${overhead.warmP50} ms (warm)\n`);

  // Sweeps: questions x 4 options, then options of one question.
  const configs: { questions: number; options: number }[] = [
    ...[1, 4, 16, 64].map((q) => ({ questions: q, options: 4 })),
    ...[2, 10, 50, 255].map((o) => ({ questions: 1, options: o })),
  ];
  const sweep = [];
  for (const c of configs) {
    const n = Math.max(3, Math.min(reps, Math.floor(600 / (c.questions * c.options))));
    const s = await measure(engine, c.questions, c.options, n);
    const p50 = percentile(s.cold, 50);
    sweep.push({
      questions: c.questions,
      options: c.options,
      pairs: s.pairs,
      requests: n,
      coldP50Ms: round(p50),
      coldP95Ms: round(percentile(s.cold, 95)),
      msPerPair: round(p50 / s.pairs, 3),
      warmP50Ms: round(percentile(s.warm, 50)),
    });
  }
  await engine.close();
  const fit = fitLine(
    sweep.map((r) => r.pairs),
    sweep.map((r) => r.coldP50Ms),
  );
  const warmFit = fitLine(
    sweep.map((r) => r.pairs),
    sweep.map((r) => r.warmP50Ms),
  );
  printTable(
    sweep.map((r) => ({
      questions: r.questions,
      options: r.options,
      pairs: r.pairs,
      n: r.requests,
      "p50 ms": r.coldP50Ms,
      "p95 ms": r.coldP95Ms,
      "ms/pair": r.msPerPair,
      "warm p50 ms": r.warmP50Ms,
    })),
  );
  console.log(
    `\nfit (fresh texts): time ≈ ${round(fit.a)} ms + ${round(fit.b, 3)} ms × pairs (r² ${round(fit.r2, 3)})` +
      `\nfit (warm cache):  time ≈ ${round(warmFit.a)} ms + ${round(warmFit.b, 4)} ms × pairs (r² ${round(warmFit.r2, 3)})`,
  );
  writeResult("model-latency", m, {
    engine: engine.info.backend,
    engineDescription: engine.info.description,
    modelLoadMs: round(loadMs),
    repsPerConfig: reps,
    single: { tokensPerPair: round(single.tokensPerPair, 1), rows: singleRows, httpOverheadMs: overhead },
    sweep,
    fit: { freshTexts: { aMs: round(fit.a), bMsPerPair: round(fit.b, 4), r2: round(fit.r2, 4) }, warmCache: { aMs: round(warmFit.a), bMsPerPair: round(warmFit.b, 4), r2: round(warmFit.r2, 4) } },
  });
}

await main();
