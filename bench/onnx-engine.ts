/**
 * The ONNX backend called directly: load time, tokenization (plan) cost, latency per request, how
 * concurrent requests batch, and the event loop's timer lag during a large run. "cold" requests use
 * texts never seen before (the tokenizer caches ids of repeated texts); "warm" ones repeat a request.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/onnx-engine.js [--dir test/fixtures/tiny-nli] [--reps 30] [--threads 2]
 *
 * --dir may be any model folder (e.g. a pulled <data dir>/models/<name>); results go to
 * bench/results/onnx-<folder name>.json.
 */
import { basename, join, resolve } from "node:path";
import { createOnnxEngine, type OnnxEngine } from "../src/engine/onnx/onnx-engine.js";
import type { Question } from "../src/questions/question.js";
import { ROOT } from "../test/helpers/service.js";
import { header, machine, numberFlag, percentile, printTable, round, writeResult } from "./lib.js";

const dirFlag = process.argv.indexOf("--dir");
const dir = resolve(dirFlag > 0 ? process.argv[dirFlag + 1] : join(ROOT, "test", "fixtures", "tiny-nli"));
const reps = numberFlag("reps", 30);
const threads = numberFlag("threads", 2);

const WORDS = "customer charged twice refund payment card subscription delivery package late broken login password error app order".split(" ");
let counter = 0;
/** A sentence of n words that no earlier call produced (a counter word makes it unique). */
function sentence(n: number): string {
  const c = counter++;
  const words = Array.from({ length: n }, (_, i) => WORDS[(c * 7 + i * 3) % WORDS.length]);
  return `${words.join(" ")} ref${c.toString(36)}`;
}

function request(questions: number, options: number, fresh: boolean): { state: string; questions: Question[] } {
  const base = fresh ? "" : "fixed";
  return {
    state: fresh ? `${sentence(40)}. ${sentence(40)}.` : "The customer was charged twice for the subscription and wants a refund of the extra payment.",
    questions: Array.from({ length: questions }, (_, q) => ({
      key: `q${q}`,
      kind: "choice" as const,
      text: fresh ? `${sentence(8)}?` : `What is question ${q} ${base} about?`,
      options: Array.from({ length: options }, (_, o) => ({ key: `o${o}`, description: fresh ? sentence(5) : `option ${o} words ${base}` })),
      yes: null,
      no: null,
    })),
  };
}

function stats(xs: number[]): { p50: number; p95: number; mean: number } {
  return { p50: round(percentile(xs, 50), 3), p95: round(percentile(xs, 95), 3), mean: round(xs.reduce((a, b) => a + b, 0) / xs.length, 3) };
}

async function timeRequests(engine: OnnxEngine, q: number, o: number, fresh: boolean): Promise<{ plan: number[]; total: number[]; tokens: number }> {
  const plan: number[] = [];
  const total: number[] = [];
  let tokens = 0;
  for (let i = 0; i < reps; i++) {
    const r = request(q, o, fresh);
    const t0 = performance.now();
    const p = engine.plan(r.state, r.questions);
    const t1 = performance.now();
    await engine.run(p);
    plan.push(t1 - t0);
    total.push(performance.now() - t0);
    tokens = p.inputTokens;
  }
  return { plan, total, tokens };
}

async function main(): Promise<void> {
  const m = machine();
  header(`ONNX engine: ${dir} (threads ${threads}, ${reps} reps)`, m);

  const loads: number[] = [];
  const rss0 = process.memoryUsage().rss;
  for (let i = 0; i < 3; i++) {
    const e = createOnnxEngine(dir, { threads });
    const t0 = performance.now();
    await e.load();
    loads.push(performance.now() - t0);
    await e.close();
  }
  const engine = createOnnxEngine(dir, { threads });
  await engine.load();
  const rssLoaded = process.memoryUsage().rss;
  console.log(`load: ${loads.map((x) => round(x, 1)).join(", ")} ms; ${engine.info.description}`);

  // Warm up the JIT and ONNX Runtime before timing.
  for (let i = 0; i < 5; i++) await engine.run(engine.plan(...Object.values(request(8, 4, true)) as [string, Question[]]));

  const rows: Record<string, string | number>[] = [];
  const results: Record<string, object> = {};
  for (const [q, o] of [[1, 4], [8, 4], [64, 4]] as const) {
    for (const fresh of [true, false]) {
      const r = await timeRequests(engine, q, o, fresh);
      const name = `${q}x${o} ${fresh ? "cold" : "warm"}`;
      const s = { plan_ms: stats(r.plan), request_ms: stats(r.total), input_tokens: r.tokens };
      results[name] = s;
      rows.push({ request: name, pairs: q * o, tokens: r.tokens, "plan p50 ms": s.plan_ms.p50, "plan p95 ms": s.plan_ms.p95, "request p50 ms": s.request_ms.p50, "request p95 ms": s.request_ms.p95 });
    }
  }
  printTable(rows);

  // The heaviest plan() a request can ask for (64 x 255 pairs; a 64 KiB body cannot actually hold that many distinct options).
  const big = request(64, 255, true);
  let t0 = performance.now();
  engine.plan(big.state, big.questions);
  const bigCold = performance.now() - t0;
  t0 = performance.now();
  engine.plan(big.state, big.questions);
  const bigWarm = performance.now() - t0;
  console.log(`\nplan 64x255: cold ${round(bigCold, 1)} ms, warm ${round(bigWarm, 1)} ms`);

  // Concurrency: 16 single-question requests at once against the same 16 one after another.
  const concurrent = Array.from({ length: 16 }, () => request(1, 4, true));
  t0 = performance.now();
  for (const r of concurrent) await engine.run(engine.plan(r.state, r.questions));
  const sequentialMs = performance.now() - t0;
  const b0 = engine.stats.batches;
  const again = Array.from({ length: 16 }, () => request(1, 4, true));
  t0 = performance.now();
  await Promise.all(again.map((r) => engine.run(engine.plan(r.state, r.questions))));
  const concurrentMs = performance.now() - t0;
  console.log(`16 requests of 1x4: one after another ${round(sequentialMs, 1)} ms, all at once ${round(concurrentMs, 1)} ms in ${engine.stats.batches - b0} batches`);

  // Timer lag while the worker runs a 64 x 4 request (a lag near the run time would mean inference blocks the main thread).
  const lagReq = request(64, 4, false);
  const lagPlan = engine.plan(lagReq.state, lagReq.questions);
  let maxLag = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    maxLag = Math.max(maxLag, now - last);
    last = now;
  }, 1);
  t0 = performance.now();
  await engine.run(lagPlan);
  const lagRun = performance.now() - t0;
  clearInterval(timer);
  console.log(`run 64x4: ${round(lagRun, 1)} ms, max timer lag ${round(maxLag, 1)} ms`);
  const rssEnd = process.memoryUsage().rss;
  console.log(`rss: ${round(rss0 / 1e6, 1)} MB before load, ${round(rssLoaded / 1e6, 1)} MB loaded, ${round(rssEnd / 1e6, 1)} MB at the end (the worker thread shares the process)`);
  await engine.close();

  writeResult(`onnx-${basename(dir)}`, m, {
    dir: basename(dir),
    threads,
    reps,
    load_ms: loads.map((x) => round(x, 1)),
    requests: results,
    plan_64x255_ms: { cold: round(bigCold, 1), warm: round(bigWarm, 1) },
    run_64x4_ms: round(lagRun, 1),
    max_timer_lag_ms_during_64x4_run: round(maxLag, 1),
    concurrent_16x_1x4_ms: { sequential: round(sequentialMs, 1), concurrent: round(concurrentMs, 1) },
    rss_mb: { before_load: round(rss0 / 1e6, 1), loaded: round(rssLoaded / 1e6, 1), end: round(rssEnd / 1e6, 1) },
  });
}

void main();
