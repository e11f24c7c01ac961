/**
 * Fits the default abstention threshold (`default_min_confidence`) of the built-in model as it is
 * served: every question of the labeled set's fit split is answered, and the threshold is the lowest
 * at which the answered questions of every type and language together are at least TARGET_ACCURACY
 * right (src/eval/threshold.ts). The temperatures it reads were fitted when the scorer was trained
 * (scripts/train/train_scorer.py, on the training data's own dev split).
 *
 *   npx tsc -p tsconfig.json && node dist/scripts/fit-threshold.js [--data eval/dev] [--model-dir models/builtin] [--dry-run]
 *
 * It writes the threshold into the folder's calibration.json. The test split is only reported.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DeciderEngine } from "../src/engine/decider/decider-engine.js";
import { loadDataset } from "../src/eval/dataset.js";
import { abstention, judge, scoreItems, type Judged, type Scored } from "../src/eval/metrics.js";
import { TARGET_ACCURACY, minConfidence } from "../src/eval/threshold.js";

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

function describe(name: string, judged: Judged[], threshold: number): string {
  const a = abstention(judged, threshold);
  const pct = (x: number): string => (Number.isNaN(x) ? "-" : `${(100 * x).toFixed(1)}%`);
  return `${name}: ${judged.length} questions, answered ${pct(a.coverage)}, of which ${pct(a.answered_accuracy)} right (abstained: ${pct(a.abstained_accuracy)} right)`;
}

async function main(): Promise<void> {
  const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
  const items = loadDataset(resolve(flag("data", join(root, "eval", "dev"))));
  const modelDir = resolve(flag("model-dir", join(root, "models", "builtin")));
  const engine = new DeciderEngine(modelDir, { threads: Number(flag("workers", "2")) });
  await engine.load();
  let scored: Scored[];
  try {
    scored = await scoreItems(engine, items);
  } finally {
    await engine.close();
  }
  const cal = engine.calibration;
  const judged = (split: string): Judged[] => scored.filter((s) => s.split === split).map((s) => judge(s, cal));
  const fit = judged("fit");
  const gate = minConfidence(fit.map((j) => j.confidence), fit.map((j) => j.correct));
  // Rounded down to 6 decimals: the least confident question answered stays answered (the threshold lies halfway
  // between its confidence and the next lower one, src/eval/threshold.ts).
  const threshold = Math.floor(gate.threshold * 1e6) / 1e6;
  console.log(`backend ${engine.info.backend}`);
  console.log(
    `default_min_confidence ${threshold} (was ${cal.default_min_confidence}): ${gate.answered}/${fit.length} fit questions answered, ` +
      `${(100 * gate.accuracy).toFixed(1)}% right` +
      (gate.reached ? "" : ` (${100 * TARGET_ACCURACY}% not reachable; best accuracy taken)`),
  );
  for (const split of ["fit", "test"]) {
    const js = judged(split);
    console.log(describe(split, js, threshold));
    for (const kind of ["noul", "choice", "score"]) console.log(`  ${describe(kind, js.filter((j) => j.kind === kind), threshold)}`);
  }
  if (process.argv.includes("--dry-run")) return;
  const file = join(modelDir, "calibration.json");
  const onDisk = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  onDisk.default_min_confidence = threshold;
  writeFileSync(file, `${JSON.stringify(onDisk, null, 2)}\n`);
  console.log(`wrote default_min_confidence to ${file}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
