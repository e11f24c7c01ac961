/**
 * Chooses the feature weights of the built-in model (model.json choice / score / noul.sides and
 * noul.question) on the "fit" split of the labeled set, for the encoder that model.json names (or
 * --encoder), and prints accuracy per language on both splits. The test split is only reported.
 *
 *   npm run build && node dist/scripts/tune-builtin.js [--encoder student|teacher] [--langs all|en,...] [--write]
 *
 * Then the weights of the contextual calibration (model.json `neutral`: choice, score, noul,
 * questionOnly; its texts are kept) are chosen per kind on the same split, with the weights above
 * fixed (questionOnly by the AUC of question-only noul items); ties keep the smaller weight.
 *
 * --write stores the chosen weights (and the encoder) in models/builtin/model.json; refit the
 * calibration afterwards (scripts/fit-calibration.ts), since raw scores change scale.
 * Criteria (threshold-free, so that calibration does not matter): choice/score by argmax accuracy,
 * noul by the area under the ROC curve; ties keep the simpler weights (fewer non-zero features).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BuiltinEngine, questionOnlyFeature, type Mix, type ModelConfig } from "../src/engine/builtin/builtin-engine.js";
import { loadDataset } from "../src/eval/dataset.js";
import type { Split } from "../src/eval/split.js";
import { flag, scoreFeatures, type Scored } from "./features.js";



const argmax = (p: number[]): number => p.reduce((best, v, i) => (v > p[best] ? i : best), 0);

function auc(xs: number[], ys: number[]): number {
  const pos = xs.filter((_, i) => ys[i] === 1);
  const neg = xs.filter((_, i) => ys[i] !== 1);
  if (pos.length === 0 || neg.length === 0) return 0.5;
  let s = 0;
  for (const p of pos) for (const n of neg) s += p > n ? 1 : p === n ? 0.5 : 0;
  return s / (pos.length * neg.length);
}

const GRID = [0, 0.5, 1];
const LAMBDAS = [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2];
function mixes(): Mix[] {
  const out: Mix[] = [];
  for (const option of GRID) for (const joint of GRID) for (const stateQuestion of GRID) {
    if (option + joint + stateQuestion > 0) out.push({ option, joint, stateQuestion });
  }
  return out;
}
const nonZero = (m: Mix): number => [m.option, m.joint, m.stateQuestion].filter((v) => v !== 0).length;

async function main(): Promise<void> {
  const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
  const dataDir = resolve(flag("data", join(root, "eval", "dev")));
  const modelDir = resolve(flag("model-dir", join(root, "models", "builtin")));
  const encoderFlag = flag("encoder", "");
  const encoder = encoderFlag === "student" || encoderFlag === "teacher" ? encoderFlag : undefined;
  const langs = flag("langs", "all").split(",");
  const items = loadDataset(dataDir);
  // The weights tuned here are the bi-encoders': the cross-encoder stays out.
  const engine = new BuiltinEngine({ modelDir, workers: Number(flag("workers", "2")), encoder, cross: false });
  const t0 = performance.now();
  const scored = await scoreFeatures(engine, items, true);
  console.log(`${engine.info.backend}: features of ${items.length} items in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const inLangs = (s: Scored): boolean => langs.includes("all") || langs.includes(s.item.lang);
  const config: ModelConfig = JSON.parse(JSON.stringify(engine.config)) as ModelConfig;

  const choiceScore = (kind: "choice" | "score", rows: Scored[], w: Mix, cfgIn: ModelConfig = config): number => {
    const cfg = { ...cfgIn, [kind]: w };
    return rows.filter((s) => engine.mix(s.features, cfg).length > 0 && argmax(engine.mix(s.features, cfg)) === s.label).length / Math.max(1, rows.length);
  };
  const noulScore = (rows: Scored[], w: Mix, question: number, cfgIn: ModelConfig = config): number => {
    const cfg = { ...cfgIn, noul: { ...cfgIn.noul, sides: w, question, bias: 0 } };
    // Question-only items sit on another scale (fitted by fit-calibration); judge sided items here.
    const sided = rows.filter((s) => s.features.kind === "noul" && (s.features.yes !== null || s.features.no !== null));
    return auc(sided.map((s) => engine.mix(s.features, cfg)[0]), sided.map((s) => s.label));
  };
  const fit = scored.filter((s) => s.split === "fit" && inLangs(s));
  for (const kind of ["choice", "score"] as const) {
    const rows = fit.filter((s) => s.item.type === kind);
    let best = config[kind];
    let bestScore = choiceScore(kind, rows, best);
    for (const m of mixes()) {
      const v = choiceScore(kind, rows, m);
      if (v > bestScore + 1e-9 || (Math.abs(v - bestScore) < 1e-9 && nonZero(m) < nonZero(best))) {
        best = m;
        bestScore = v;
      }
    }
    console.log(`${kind}: ${JSON.stringify(best)} fit accuracy ${(100 * bestScore).toFixed(1)}% (n=${rows.length})`);
    config[kind] = best;
  }
  {
    const rows = fit.filter((s) => s.item.type === "noul");
    let best = { sides: config.noul.sides, question: config.noul.question };
    let bestScore = noulScore(rows, best.sides, best.question);
    for (const m of mixes()) for (const question of [0, 0.5, 1, -0.5]) {
      const v = noulScore(rows, m, question);
      if (v > bestScore + 1e-9) {
        best = { sides: m, question };
        bestScore = v;
      }
    }
    console.log(`noul: ${JSON.stringify(best)} fit AUC ${bestScore.toFixed(3)}`);
    config.noul = { ...config.noul, sides: best.sides, question: best.question, bias: 0 };
  }
  if (config.neutral && config.neutral.texts.length > 0) {
    const neutral = { ...config.neutral };
    const withLambda = (kind: keyof typeof neutral, l: number): ModelConfig => ({ ...config, neutral: { ...neutral, [kind]: l } });
    const bareRows = fit.filter((s) => s.features.kind === "noul" && s.features.yes === null && s.features.no === null);
    const bareAuc = (cfg: ModelConfig): number =>
      auc(bareRows.map((s) => (s.features.kind === "noul" ? questionOnlyFeature(s.features, cfg) : 0)), bareRows.map((s) => s.label));
    const measure = (kind: "choice" | "score" | "noul" | "questionOnly", l: number): number => {
      const cfg = withLambda(kind, l);
      if (kind === "choice" || kind === "score") return choiceScore(kind, fit.filter((s) => s.item.type === kind), cfg[kind], cfg);
      if (kind === "noul") return noulScore(fit.filter((s) => s.item.type === "noul"), cfg.noul.sides, cfg.noul.question, cfg);
      return bareAuc(cfg);
    };
    for (const kind of ["choice", "score", "noul", "questionOnly"] as const) {
      let best = 0;
      let bestScore = measure(kind, 0);
      const base = bestScore;
      for (const l of LAMBDAS) {
        const v = measure(kind, l);
        if (v > bestScore + 1e-9) {
          best = l;
          bestScore = v;
        }
      }
      neutral[kind] = best;
      console.log(`neutral ${kind}: weight ${best} (fit ${kind === "choice" || kind === "score" ? "accuracy" : "AUC"} ${base.toFixed(3)} -> ${bestScore.toFixed(3)})`);
    }
    config.neutral = neutral;
  }

  // Report: argmax accuracy (choice/score) and AUC (sided noul) per split and language.
  const langList = [...new Set(scored.map((s) => s.item.lang))];
  for (const split of ["fit", "test"] as Split[]) {
    for (const lang of langList) {
      const rows = scored.filter((s) => s.split === split && s.item.lang === lang);
      const c = rows.filter((s) => s.item.type === "choice");
      const sc = rows.filter((s) => s.item.type === "score");
      const n = rows.filter((s) => s.item.type === "noul");
      console.log(
        `${split} ${lang.padEnd(5)} choice ${(100 * choiceScore("choice", c, config.choice)).toFixed(1)}% (${c.length})  score ${(100 * choiceScore("score", sc, config.score)).toFixed(1)}% (${sc.length})  noul AUC ${noulScore(n, config.noul.sides, config.noul.question).toFixed(3)} (${n.length})`,
      );
    }
  }
  if (!process.argv.includes("--write")) return;
  const onDisk = JSON.parse(readFileSync(join(modelDir, "model.json"), "utf8")) as ModelConfig;
  if (encoder) onDisk.encoder = encoder;
  onDisk.choice = config.choice;
  onDisk.score = config.score;
  onDisk.noul = { ...onDisk.noul, sides: config.noul.sides, question: config.noul.question, bias: 0 };
  if (config.neutral) onDisk.neutral = config.neutral;
  writeFileSync(join(modelDir, "model.json"), `${JSON.stringify(onDisk, null, 2)}\n`);
  console.log(`wrote weights to ${join(modelDir, "model.json")}; now refit the calibration`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
