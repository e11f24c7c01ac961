/**
 * Fits the cross-encoder's calibration (models/builtin/cross/calibration.json) on the "fit" split of
 * a labeled set, with the same fits as scripts/fit-calibration.ts (calibration-fit.ts):
 * choice/score temperature by log loss, noul P(true) = sigmoid(a * (yes logit - no logit) + b) by
 * class-balanced logistic regression. default_min_confidence is kept as it is on disk: it is served
 * only when the cross-encoder reads every type, and scripts/fit-threshold.ts fits it for that route.
 *
 *   npx tsc -p tsconfig.json && node dist/scripts/fit-cross-calibration.js [--data eval/dev] [--model-dir models/builtin] [--dry-run]
 *
 * Only items the cross-encoder reads (the engine's route) are fitted; the test split is only reported.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { answerNumbers } from "../src/engine/answer.js";
import { BuiltinEngine } from "../src/engine/builtin/builtin-engine.js";
import type { Calibration } from "../src/engine/engine.js";
import { loadDataset, toQuestion } from "../src/eval/dataset.js";
import { scoreItems, type Scored } from "../src/eval/metrics.js";
import { renderText } from "../src/questions/render.js";
import { fitTemperature, logistic } from "./calibration-fit.js";
import { flag } from "./features.js";

function round(x: number): number {
  return Number(x.toPrecision(6));
}

function outcome(s: Scored, cal: Calibration): { correct: boolean; confidence: number } {
  const n = answerNumbers(s.kind, s.raw, toQuestion(s.item).options.map((o) => o.key), cal);
  return { correct: n.best === s.label, confidence: n.confidence };
}

async function main(): Promise<void> {
  const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
  const items = loadDataset(resolve(flag("data", join(root, "eval", "dev"))));
  const modelDir = resolve(flag("model-dir", join(root, "models", "builtin")));
  const engine = new BuiltinEngine({ modelDir, workers: Number(flag("workers", "2")) });
  await engine.load();
  let scored: Scored[];
  try {
    const crossRead = items.filter((it) => engine.encoderOf(engine.plan(renderText(it.state), [toQuestion(it)])) === "cross");
    scored = await scoreItems(engine, crossRead);
  } finally {
    await engine.close();
  }
  const file = join(modelDir, engine.config.cross?.dir ?? "cross", "calibration.json");
  const fit = scored.filter((s) => s.split === "fit");
  const noul = fit.filter((s) => s.kind === "noul");
  const choice = fit.filter((s) => s.kind === "choice");
  const score = fit.filter((s) => s.kind === "score");
  const n = logistic(noul.map((s) => s.raw[0]), noul.map((s) => s.label));
  const cal: Calibration = {
    choice: { temperature: round(fitTemperature(choice.map((s) => s.raw), choice.map((s) => s.label))) },
    score: { temperature: round(fitTemperature(score.map((s) => s.raw), score.map((s) => s.label))) },
    noul: { a: round(n.a), b: round(n.b) },
    default_min_confidence: (JSON.parse(readFileSync(file, "utf8")) as Calibration).default_min_confidence,
  };
  console.log(`${scored.length} items read by the cross-encoder; fitted on ${fit.length} (fit split: noul ${noul.length}, choice ${choice.length}, score ${score.length})`);
  for (const split of ["fit", "test"]) {
    const rows = scored.filter((s) => s.split === split).map((s) => outcome(s, cal));
    const answered = rows.filter((o) => o.confidence >= cal.default_min_confidence);
    const pct = (k: number, of: number): string => `${((100 * k) / Math.max(1, of)).toFixed(1)}%`;
    console.log(
      `${split}: accuracy ${pct(rows.filter((o) => o.correct).length, rows.length)} (n=${rows.length}); ` +
        `answered ${pct(answered.length, rows.length)}, of which ${pct(answered.filter((o) => o.correct).length, answered.length)} right`,
    );
  }
  console.log(JSON.stringify(cal));
  if (process.argv.includes("--dry-run")) return;
  writeFileSync(file, `${JSON.stringify(cal, null, 2)}\n`);
  console.log(`wrote ${file}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
