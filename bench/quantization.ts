/**
 * What the encoder's integer arithmetic changes: top-1 answers of the served model against the same model with its
 * encoder in float32, over every question of eval/dev (both halves), each side's accuracy, and the largest change of
 * any answer's probabilities.
 *
 *   npm run bench:quantization -- --reference DIR [--model MODEL]
 *
 * DIR: a copy of the model folder whose onnx/encoder.onnx is the float32 graph of the same weights
 * (`scripts/base/build_base.py --float32 --out DIR`, then the other files copied beside it; see models/builtin/SOURCE.md).
 * MODEL: the integer model folder measured (default models/builtin; scripts/train/candidate.sh passes a candidate,
 * whose result goes to bench/results/tmp-quantization.json, which git ignores, not beside the served model's).
 */
import { resolve } from "node:path";
import { DeciderEngine } from "../src/engine/decider/decider-engine.js";
import { loadDataset } from "../src/eval/dataset.js";
import { judge, scoreItems } from "../src/eval/metrics.js";
import { ROOT } from "../test/helpers/service.js";
import { header, machine, printTable, round, writeResult } from "./lib.js";

async function answers(dir: string | undefined) {
  const engine = new DeciderEngine(dir);
  await engine.load();
  try {
    const items = loadDataset(resolve(ROOT, "eval", "dev"));
    return (await scoreItems(engine, items)).map((s) => ({ split: s.split, lang: s.item.lang, ...judge(s, engine.calibration) }));
  } finally {
    await engine.close();
  }
}

async function main(): Promise<void> {
  const m = machine();
  header("bench:quantization: the served (integer) encoder against float32, on eval/dev", m);
  const at = process.argv.indexOf("--reference");
  if (at < 0 || !process.argv[at + 1]) throw new Error("--reference DIR is required (a model folder with the float32 encoder)");
  const modelAt = process.argv.indexOf("--model");
  if (modelAt >= 0 && !process.argv[modelAt + 1]) throw new Error("--model takes a model folder");
  const model = modelAt >= 0 ? resolve(process.argv[modelAt + 1]) : undefined;
  const served = await answers(model);
  const reference = await answers(resolve(process.argv[at + 1]));
  let agree = 0;
  let maxDiff = 0;
  served.forEach((s, i) => {
    const r = reference[i];
    if (s.numbers.best === r.numbers.best) agree++;
    s.numbers.probabilities.forEach((p, k) => (maxDiff = Math.max(maxDiff, Math.abs(p - r.numbers.probabilities[k]))));
  });
  const acc = (rows: typeof served, split?: string) => {
    const r = rows.filter((x) => split === undefined || x.split === split);
    return round((100 * r.filter((x) => x.correct).length) / r.length, 1);
  };
  printTable([
    { encoder: "served (integer)", "all %": acc(served), "fit %": acc(served, "fit"), "test %": acc(served, "test") },
    { encoder: "float32", "all %": acc(reference), "fit %": acc(reference, "fit"), "test %": acc(reference, "test") },
  ]);
  const agreement = round((100 * agree) / served.length, 1);
  console.log(`\ntop-1 agreement: ${agree} of ${served.length} (${agreement}%); largest probability change ${round(maxDiff, 3)}`);
  writeResult(model ? "tmp-quantization" : "quantization", m, {
    questions: served.length,
    agree,
    agreementPct: agreement,
    maxProbabilityChange: round(maxDiff, 4),
    accuracyPct: { served: { all: acc(served), fit: acc(served, "fit"), test: acc(served, "test") }, float32: { all: acc(reference), fit: acc(reference, "fit"), test: acc(reference, "test") } },
  });
}

await main();
