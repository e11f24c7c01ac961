/**
 * The decision scorer's graph alone (with the state graph where the scorer reads its output; onnxruntime-node,
 * 2 threads, as the worker runs them) against another scorer graph, runs interleaved so both see the machine in the
 * same state: random token states (each graph's own width) of the shapes of one question with 255 options, 4 options
 * over a 200-token state, and 4 short options over a 60-token state.
 *
 *   npm run bench:scorer -- --baseline OLD.onnx [--reps 20]
 *
 * OLD.onnx: for example svc-1.2.0's scorer, `git show 3238c50:models/builtin/onnx/scorer.onnx`.
 */
import { join } from "node:path";
import ort from "onnxruntime-node";
import { int64 } from "../src/engine/int64.js";
import { sessionOptions } from "../src/engine/decider/session-options.js";
import { ROOT } from "../test/helpers/service.js";
import { header, machine, numberFlag, percentile, printTable, round, writeResult } from "./lib.js";

/** A graph's token width: its `state` input's last dimension (384 before the scorer read the encoder's top layers, 3 × 384 now). */
function width(g: ort.InferenceSession): number {
  const meta = g.inputMetadata.find((x) => x.name === "state");
  const last = meta && meta.isTensor ? meta.shape[meta.shape.length - 1] : undefined;
  if (typeof last !== "number") throw new Error("the scorer graph's state input has no fixed width");
  return last;
}

function feed(HIDDEN: number, state: number, question: number, options: number, optionTokens: number): Record<string, ort.Tensor> {
  const rnd = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
  const ones = (n: number): BigInt64Array => int64(new Int32Array(n).fill(1));
  return {
    state: new ort.Tensor("float32", rnd(state * HIDDEN), [1, state, HIDDEN]),
    state_mask: new ort.Tensor("int64", ones(state), [1, state]),
    question: new ort.Tensor("float32", rnd(question * HIDDEN), [1, question, HIDDEN]),
    question_mask: new ort.Tensor("int64", ones(question), [1, question]),
    options: new ort.Tensor("float32", rnd(options * optionTokens * HIDDEN), [options, optionTokens, HIDDEN]),
    options_mask: new ort.Tensor("int64", ones(options * optionTokens), [options, optionTokens]),
    qtype: new ort.Tensor("int64", int64([1]), [1]),
  };
}

async function main(): Promise<void> {
  const m = machine();
  header("bench:scorer: the scorer graph alone, against a baseline graph, interleaved", m);
  const at = process.argv.indexOf("--baseline");
  if (at < 0 || !process.argv[at + 1]) throw new Error("--baseline OLD.onnx is required");
  const reps = numberFlag("reps", 20);
  const options = sessionOptions(2);
  const graphs = {
    served: await ort.InferenceSession.create(join(ROOT, "models", "builtin", "onnx", "scorer.onnx"), options),
    baseline: await ort.InferenceSession.create(process.argv[at + 1], options),
  };
  const stateGraph = await ort.InferenceSession.create(join(ROOT, "models", "builtin", "onnx", "state.onnx"), options);
  /** One question as the engine scores it; a graph that takes the state's keys and values gets them from the state graph (timed with it). */
  const run = async (g: ort.InferenceSession, f: Record<string, ort.Tensor>): Promise<void> => {
    if (g.inputNames.includes("state_kv")) await g.run({ ...f, state_kv: (await stateGraph.run({ state: f.state })).state_kv });
    else await g.run(f);
  };
  const shapes = [
    { state: 60, question: 20, options: 255, optionTokens: 26 },
    { state: 200, question: 20, options: 4, optionTokens: 26 },
    { state: 60, question: 12, options: 4, optionTokens: 8 },
  ];
  const rows = [];
  for (const s of shapes) {
    const f = { served: feed(width(graphs.served), s.state, s.question, s.options, s.optionTokens), baseline: feed(width(graphs.baseline), s.state, s.question, s.options, s.optionTokens) };
    const ms = { served: [] as number[], baseline: [] as number[] };
    for (const [name, g] of Object.entries(graphs)) await run(g, f[name as keyof typeof f]);
    const n = s.options > 100 ? Math.max(3, Math.floor(reps / 3)) : reps;
    for (let i = 0; i < n; i++) {
      for (const [name, g] of Object.entries(graphs)) {
        const t0 = performance.now();
        await run(g, f[name as keyof typeof f]);
        ms[name as keyof typeof ms].push(performance.now() - t0);
      }
    }
    const served = percentile(ms.served, 50);
    const baseline = percentile(ms.baseline, 50);
    rows.push({ ...s, runs: n, servedP50Ms: round(served), baselineP50Ms: round(baseline), ratio: round(served / baseline, 3) });
  }
  printTable(rows.map((r) => ({ state: r.state, question: r.question, "options × tokens": `${r.options} × ${r.optionTokens}`, runs: r.runs, "served p50 ms": r.servedP50Ms, "baseline p50 ms": r.baselineP50Ms, ratio: r.ratio })));
  writeResult("scorer-graph", m, { baseline: process.argv[at + 1].split("/").pop(), rows });
}

await main();
