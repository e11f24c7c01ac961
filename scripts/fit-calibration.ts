/**
 * Fits the calibration of the built-in model on the "fit" split of a labeled set and writes
 * models/builtin/calibration.json (and the question-only noul mapping in models/builtin/model.json).
 *
 *   npx tsc -p tsconfig.json && node dist/scripts/fit-calibration.js [--data eval/dev] [--model-dir models/builtin]
 *     [--langs en|all|en,fr] [--encoder teacher|student] [--dry-run]
 *
 * The folder's own encoder (model.json `encoder`, default teacher) is fitted alone, even when the
 * folder routes non-English requests to a multilingual student: that student is a model folder of
 * its own, fitted with --model-dir models/builtin/multilingual --langs all.
 *
 * Fits on items of the fit split in the model's own languages (info.languages, "en") unless --langs says otherwise.
 *
 * What is fitted, with the answer math of src/engine/answer.ts:
 * - choice / score temperature T: minimizes the log loss of softmax(raw / T) on the label.
 * - noul: a question with yes/no criteria compares the two sides (raw = side difference); one without
 *   them only has cos(state, question), on another scale. A logistic regression per case maps both
 *   onto one logit scale (model.json noul.questionOnly), then P(true) = sigmoid(a * raw + b) is
 *   fitted by logistic regression over all noul items. Both regressions weight true and false
 *   labels equally, so the fitted P(true) assumes no prior either way.
 * - default_min_confidence is kept as it is on disk: scripts/fit-threshold.ts fits it afterwards for
 *   the route the engine serves (which may read some questions with the cross-encoder).
 * The test split is only scored for the report, never used for fitting.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { confidenceOf, sigmoid, softmax } from "../src/engine/answer.js";
import { BuiltinEngine, questionOnlyFeature, type ModelConfig } from "../src/engine/builtin/builtin-engine.js";
import type { Calibration } from "../src/engine/engine.js";
import { loadDataset } from "../src/eval/dataset.js";
import type { Split } from "../src/eval/split.js";
import { flag, scoreFeatures, type Scored } from "./features.js";
import { argmax, fitTemperature, logistic } from "./calibration-fit.js";




function raw(engine: BuiltinEngine, s: Scored, config: ModelConfig): number[] {
  return engine.mix(s.features, config);
}

function report(engine: BuiltinEngine, scored: Scored[], config: ModelConfig, cal: Calibration): void {
  for (const split of ["fit", "test"] as Split[]) {
    for (const lang of ["all", "en", "other"]) {
      const cells: string[] = [];
      for (const kind of ["choice", "score", "noul"]) {
        const rows = scored.filter(
          (s) => s.split === split && s.item.type === kind && (lang === "all" || (lang === "en") === (s.item.lang === "en")),
        );
        let ok = 0;
        let answered = 0;
        let answeredOk = 0;
        for (const s of rows) {
          const r = raw(engine, s, config);
          let p: number[];
          if (kind === "noul") {
            const t = sigmoid(cal.noul.a * r[0] + cal.noul.b);
            p = [1 - t, t];
          } else p = softmax(r, kind === "choice" ? cal.choice.temperature : cal.score.temperature);
          const hit = argmax(p) === s.label;
          if (hit) ok++;
          if (confidenceOf(p) >= cal.default_min_confidence) {
            answered++;
            if (hit) answeredOk++;
          }
        }
        const pct = (x: number, n: number): string => (n === 0 ? "  -  " : `${((100 * x) / n).toFixed(1)}%`);
        cells.push(`${kind} ${pct(ok, rows.length)} (n=${rows.length}; answered ${answered}, ${pct(answeredOk, answered)})`);
      }
      console.log(`${split.padEnd(4)} ${lang.padEnd(5)} ${cells.join("  ")}`);
    }
  }
}

async function main(): Promise<void> {
  const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
  const dataDir = resolve(flag("data", join(root, "eval", "dev")));
  const modelDir = resolve(flag("model-dir", join(root, "models", "builtin")));
  const dryRun = process.argv.includes("--dry-run");
  const items = loadDataset(dataDir);
  const own = (JSON.parse(readFileSync(join(modelDir, "model.json"), "utf8")) as ModelConfig).encoder ?? "teacher";
  const encoder = flag("encoder", own) === "student" ? "student" : "teacher";
  const engine = new BuiltinEngine({ modelDir, workers: Number(flag("workers", "2")), encoder });
  const scored = await scoreFeatures(engine, items);
  // Only languages the model reads: on other languages its similarities mostly measure "not
  // English" (cos(state, question) is 0.7-0.9 for any pair of non-English texts, 0-0.5 for English),
  // and fitting on them would move the English thresholds to separate languages instead of answers.
  const langs = flag("langs", engine.info.languages.join(",")).split(",");
  const fit = scored.filter((s) => s.split === "fit" && (langs.includes("all") || langs.includes(s.item.lang)));
  console.log(`${items.length} items; fitting on ${fit.length} of the fit split (languages: ${langs.join(", ")})`);

  // noul: put question-only items on the scale of items with yes/no sides.
  const config: ModelConfig = JSON.parse(JSON.stringify(engine.config)) as ModelConfig;
  const noul = fit.filter((s) => s.features.kind === "noul");
  const sided = noul.filter((s) => s.features.kind === "noul" && (s.features.yes !== null || s.features.no !== null));
  const bare = noul.filter((s) => !sided.includes(s));
  const sidedFit = logistic(sided.map((s) => raw(engine, s, { ...config, noul: { ...config.noul, bias: 0 } })[0]), sided.map((s) => s.label));
  const bareX = bare.map((s) => (s.features.kind === "noul" ? questionOnlyFeature(s.features, config) : 0));
  const bareFit = logistic(bareX, bare.map((s) => s.label));
  console.log(`noul with sides: a=${sidedFit.a.toFixed(3)} b=${sidedFit.b.toFixed(3)} (n=${sided.length}); question only: a=${bareFit.a.toFixed(3)} b=${bareFit.b.toFixed(3)} (n=${bare.length})`);
  if (sidedFit.a > 0 && bare.length > 0) {
    config.noul.bias = 0;
    config.noul.questionOnly = { question: round(bareFit.a / sidedFit.a), bias: round((bareFit.b - sidedFit.b) / sidedFit.a) };
  }

  const noulFit = logistic(noul.map((s) => raw(engine, s, config)[0]), noul.map((s) => s.label));
  const choice = fit.filter((s) => s.item.type === "choice");
  const score = fit.filter((s) => s.item.type === "score");
  // Rounded first: the confidence gate below must see the temperature that will be shipped.
  const choiceT = round(fitTemperature(choice.map((s) => raw(engine, s, config)), choice.map((s) => s.label)));
  const scoreT = round(fitTemperature(score.map((s) => raw(engine, s, config)), score.map((s) => s.label)));
  const cal: Calibration = {
    choice: { temperature: choiceT },
    score: { temperature: scoreT },
    noul: { a: round(noulFit.a), b: round(noulFit.b) },
    default_min_confidence: engine.calibration.default_min_confidence,
  };
  console.log(JSON.stringify(cal));
  report(engine, scored, config, cal);
  if (dryRun) return;
  writeFileSync(join(modelDir, "calibration.json"), `${JSON.stringify(cal, null, 2)}\n`);
  const onDisk = JSON.parse(readFileSync(join(modelDir, "model.json"), "utf8")) as ModelConfig;
  onDisk.noul = config.noul;
  writeFileSync(join(modelDir, "model.json"), `${JSON.stringify(onDisk, null, 2)}\n`);
  console.log(`wrote ${join(modelDir, "calibration.json")} and noul.questionOnly in model.json`);
}

function round(x: number): number {
  return Number(x.toPrecision(6));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
