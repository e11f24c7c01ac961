import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createEngine } from "../engine/registry.js";
import type { Config } from "../config.js";
import { loadDataset } from "../eval/dataset.js";
import { abstention, accuracy, ece, eceFloor, judge, reliabilityBins, scoreItems, type Judged } from "../eval/metrics.js";
import { reliabilitySvg } from "../eval/reliability.js";
import type { QuestionKind } from "../questions/question.js";
import { flagString, type Args } from "./args.js";
import { languagesOf, pct } from "./eval-format.js";
import { evalDescriptions } from "./eval-descriptions.js";
import { evalPublic } from "./eval-public.js";

const DEFAULT_DIR = fileURLToPath(new URL("../../../eval/dev", import.meta.url));
const KINDS: QuestionKind[] = ["noul", "choice", "score"];
const THRESHOLDS = [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7];

/** A threshold as printed: two decimals, three when two would round it onto a neighbouring row of the curve. */
function thresholdText(t: number): string {
  return Number.isInteger(Math.round(t * 1e6) / 1e4) ? t.toFixed(2) : t.toFixed(3);
}

/** `svc eval`: accuracy per type and language, calibration error and abstention, on the labeled set. */
export async function evalCommand(config: Config, args: Args): Promise<number> {
  const pub = flagString(args, "public");
  if (pub !== undefined) return evalPublic(config, args, pub);
  const dir = flagString(args, "dir") ?? DEFAULT_DIR;
  const split = flagString(args, "split") ?? "all";
  if (split !== "all" && split !== "fit" && split !== "test") throw new Error("--split must be all, fit or test");
  if (args.flags.has("descriptions")) return evalDescriptions(config, args, dir, split);
  const items = loadDataset(dir);
  const engine = createEngine({ workers: config.workers, dataDir: config.dataDir });
  await engine.load();
  try {
    const given = flagString(args, "threshold");
    const threshold = Number(given ?? engine.calibration.default_min_confidence);
    if (!Number.isFinite(threshold) || threshold < 0 || threshold > 1) throw new Error("--threshold must be a number from 0 to 1");
    const t0 = performance.now();
    const scored = (await scoreItems(engine, items)).filter((s) => split === "all" || s.split === split);
    const seconds = (performance.now() - t0) / 1000;
    const rows = scored.map((s) => ({ s, j: judge(s, engine.calibration) }));
    const langs = languagesOf(rows.map((r) => r.s.item.lang));
    const pick = (f: (r: (typeof rows)[number]) => boolean): Judged[] => rows.filter(f).map((r) => r.j);
    const byLang = Object.fromEntries(
      langs.map((l) => [
        l,
        Object.fromEntries([...KINDS, "all"].map((k) => {
          const js = pick((r) => r.s.item.lang === l && (k === "all" || r.s.kind === k));
          return [k, { n: js.length, accuracy: accuracy(js), ece: ece(js), ...(k === "all" ? { ece_floor: eceFloor(js) } : {}) }];
        })),
      ]),
    );
    const byKind = Object.fromEntries(KINDS.map((k) => {
      const js = pick((r) => r.s.kind === k);
      return [k, { n: js.length, accuracy: accuracy(js), ece: ece(js) }];
    }));
    const all = rows.map((r) => r.j);
    const curve = THRESHOLDS.map((t) => ({ threshold: t, ...abstention(all, t) }));
    const ms = scored.map((s) => s.ms).sort((a, b) => a - b);
    const result = {
      backend: engine.info.backend,
      dir,
      split,
      items: scored.length,
      seconds: Math.round(seconds * 10) / 10,
      p50_ms_per_question: Math.round(ms[Math.floor(ms.length / 2)] ?? 0),
      by_kind: byKind,
      by_lang: byLang,
      overall: { accuracy: accuracy(all), ece: ece(all), ece_floor: eceFloor(all) },
      abstention: { threshold, ...abstention(all, threshold) },
      curve,
    };
    const plot = flagString(args, "plot");
    if (plot !== undefined) {
      const series = [...langs, "all"].map((l) => {
        const js = l === "all" ? all : pick((r) => r.s.item.lang === l);
        return { name: l, bins: reliabilityBins(js), ece: ece(js) };
      });
      writeFileSync(plot, reliabilitySvg(`Reliability of ${result.backend} (${result.items} questions, split ${split})`, series));
      process.stderr.write(`svc: reliability diagram written to ${plot}\n`);
    }
    if (args.flags.has("json")) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return 0;
    }
    const out: string[] = [];
    out.push(`model ${result.backend}, ${result.items} questions (split: ${split}), ${result.seconds} s, p50 ${result.p50_ms_per_question} ms per question`);
    out.push("", "accuracy (n) by language and type; ECE = expected calibration error of the top answer;");
    out.push("floor = the ECE a perfectly calibrated model would show with these confidences and this few questions");
    out.push(`lang   ${KINDS.map((k) => k.padEnd(15)).join("")}all            ECE    floor`);
    for (const l of langs) {
      const cells = [...KINDS, "all"].map((k) => {
        const c = byLang[l][k];
        return `${pct(c.accuracy)} (${String(c.n).padStart(3)})  `;
      });
      out.push(`${l.padEnd(6)} ${cells.join("")} ${byLang[l].all.ece.toFixed(3)}  ${(byLang[l].all.ece_floor ?? NaN).toFixed(3)}`);
    }
    out.push(`${"all".padEnd(6)} ${KINDS.map((k) => `${pct(byKind[k].accuracy)} (${String(byKind[k].n).padStart(3)})  `).join("")}${pct(result.overall.accuracy)} (${String(all.length).padStart(3)})   ${result.overall.ece.toFixed(3)}  ${result.overall.ece_floor.toFixed(3)}`);
    out.push(`ECE by type: ${KINDS.map((k) => `${k} ${byKind[k].ece.toFixed(3)}`).join(", ")}`);
    out.push("", "abstention: answer only when confidence >= threshold");
    out.push("threshold  answered  accuracy(answered)  accuracy(abstained)");
    const rowsToShow = curve.some((c) => c.threshold === threshold) ? curve : [...curve, result.abstention].sort((a, b) => a.threshold - b.threshold);
    for (const c of rowsToShow) {
      const mark = c.threshold === threshold ? (given === undefined ? "  <- model default" : "  <- --threshold") : "";
      out.push(`${thresholdText(c.threshold).padStart(9)}  ${pct(c.coverage)}    ${pct(c.answered_accuracy)}              ${pct(c.abstained_accuracy)}${mark}`);
    }
    process.stdout.write(`${out.join("\n")}\n`);
    return 0;
  } finally {
    await engine.close();
  }
}
