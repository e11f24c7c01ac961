/**
 * Latency of the built-in model, called directly (plan + run) and once through HTTP for the overhead:
 * one choice question with 4 options, then 1..64 questions and 2..255 options, with a least-squares
 * fit time = a + b·pairs. Every cold request uses texts never seen before (the engine caches the
 * embeddings of repeated texts); the warm numbers repeat one request so that every embedding is cached.
 *
 * Each path is measured in its own child process, one after the other in the same run, and reported
 * side by side: the English bi-encoder on the package's tfjs graph on wasm (the oldest path) and on
 * the project's ONNX graph (float32, and int8 when that file exists), then the cross-encoder
 * (models/builtin/cross, float32 and int8), which reads choice questions by default.
 *
 *   npm run bench:model [-- --reps 40] [-- --paths tfjs,onnx,int8,cross,cross-int8]
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseSystemOne } from "../src/api/systemone.js";
import { encoderPath } from "../src/engine/builtin/encoder-files.js";
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

function stringFlag(name: string): string | null {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? null) : null;
}

/** One encoder runtime, measured in this process (a child of main()); its result goes to `out`. */
async function measurePath(path: string, out: string): Promise<void> {
  // Bi-encoder paths (tfjs, onnx, int8: the English encoder's runtimes) run without the cross-encoder;
  // cross and cross-int8 are the cross-encoder (its float32 and int8 files) with the ONNX bi-encoder.
  process.env.SVC_BUILTIN_ENCODER = path.startsWith("cross") ? "onnx" : path;
  process.env.SVC_BUILTIN_CROSS = path === "cross" ? "on" : path === "cross-int8" ? "int8" : "off";
  const m = machine();
  header(`bench:model, encoder ${path}`, m);
  const reps = numberFlag("reps", 40);
  const engine = createEngine({ workers: 0 });
  const t0 = performance.now();
  await engine.load();
  const loadMs = performance.now() - t0;
  const rssLoadedMiB = process.memoryUsage().rss / 2 ** 20;
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
    ...[2, 10, 32, 50, 255].map((o) => ({ questions: 1, options: o })),
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
  const data = {
    encoder: path,
    engine: engine.info.backend,
    rssMiB: { afterLoad: round(rssLoadedMiB, 1), afterSweep: round(process.memoryUsage().rss / 2 ** 20, 1), peak: round(process.resourceUsage().maxRSS / 1024, 1) },
    engineDescription: engine.info.description,
    modelLoadMs: round(loadMs),
    repsPerConfig: reps,
    single: { tokensPerPair: round(single.tokensPerPair, 1), rows: singleRows, httpOverheadMs: overhead },
    sweep,
    fit: { freshTexts: { aMs: round(fit.a), bMsPerPair: round(fit.b, 4), r2: round(fit.r2, 4) }, warmCache: { aMs: round(warmFit.a), bMsPerPair: round(warmFit.b, 4), r2: round(warmFit.r2, 4) } },
    loadAvg: { start: m.loadAvgAtStart, end: machine().loadAvgAtStart },
  };
  writeFileSync(out, JSON.stringify(data));
}

type PathResult = {
  encoder: string;
  rssMiB: { afterLoad: number; afterSweep: number; peak: number };
  single: { tokensPerPair: number; rows: { path: string; p50: number; p95: number }[] };
  sweep: { questions: number; options: number; pairs: number; coldP50Ms: number; msPerPair: number }[];
  fit: { freshTexts: { aMs: number; bMsPerPair: number; r2: number } };
  loadAvg: { start: number; end: number };
};

/** Runs every path in its own process, one after the other, and reports them side by side. */
async function main(): Promise<void> {
  const m = machine();
  header("bench:model: built-in model latency, encoder runtimes side by side (sequential requests, fresh texts unless 'warm')", m);
  const wanted = (stringFlag("paths") ?? "tfjs,onnx,int8,cross,cross-int8").split(",");
  const paths = wanted.filter((p) => p !== "int8" || existsSync(encoderPath("int8")));
  const script = fileURLToPath(import.meta.url);
  const results: PathResult[] = [];
  for (const path of paths) {
    const out = join(tmpdir(), `svc-bench-model-${process.pid}-${path}.json`);
    execFileSync(process.execPath, [script, "--path", path, "--out", out, "--reps", String(numberFlag("reps", 40))], { stdio: "inherit" });
    results.push(JSON.parse(readFileSync(out, "utf8")) as PathResult);
    rmSync(out, { force: true });
  }
  const base = results[0];
  const pairsPerSecond = (r: PathResult): number => {
    const big = r.sweep.filter((x) => x.pairs >= 255);
    return big.reduce((a, x) => a + (1000 * x.pairs) / x.coldP50Ms, 0) / big.length;
  };
  console.log("\nside by side (ratios against the first path, measured in this run):");
  printTable(
    results.map((r) => ({
      encoder: r.encoder,
      "1x4 fresh p50 ms": r.single.rows[0].p50,
      "1x4 fresh p95 ms": r.single.rows[0].p95,
      "HTTP 1x4 fresh p50 ms": r.single.rows[2].p50,
      "fit ms/pair": r.fit.freshTexts.bMsPerPair,
      "pairs/s (255-256 pairs)": round(pairsPerSecond(r), 1),
      "× pairs/s": round(pairsPerSecond(r) / pairsPerSecond(base), 2),
      "RSS MiB load/peak": `${r.rssMiB.afterLoad}/${r.rssMiB.peak}`,
    })),
  );
  console.log("\nfresh p50 ms per request:");
  printTable(
    base.sweep.map((row, i) => ({
      "q × o": `${row.questions} × ${row.options}`,
      pairs: row.pairs,
      ...Object.fromEntries(results.flatMap((r) => [[`${r.encoder} ms`, r.sweep[i].coldP50Ms], [`${r.encoder} ms/pair`, r.sweep[i].msPerPair]])),
    })),
  );
  writeResult("model-latency", m, { paths: results.map((r) => ({ ...r, pairsPerSecondAt255: round(pairsPerSecond(r), 1) })) });
}

const child = stringFlag("path");
const out = stringFlag("out");
if (child && out) await measurePath(child, out);
else await main();
