import { readFileSync, writeFileSync } from "node:fs";
import { fitCalibration, parseCalibrationRequest, type FittedCalibration } from "../calibration/fit.js";
import { createEngine } from "../engine/registry.js";
import { openAccountStore } from "../accounts/open.js";
import { ApiError } from "../http/errors.js";
import type { Config } from "../config.js";
import { flagString, type Args } from "./args.js";

function pct(x: number): string {
  return Number.isNaN(x) ? "-" : `${(100 * x).toFixed(1)}%`;
}

function reportText(f: FittedCalibration): string {
  const out = [
    `calibration ${f.name}@${f.hash} for ${f.model} (model files ${f.model_hash}): ${f.examples.fit} examples fitted, ${f.examples.held_out} held out`,
    `target accuracy ${pct(f.target_accuracy)}; min_confidence noul ${f.min_confidence.noul}, choice ${f.min_confidence.choice}, score ${f.min_confidence.score}`,
    "",
    "held out    n  accuracy   ECE before → after   answered before → after   right when answered before → after",
  ];
  for (const k of ["noul", "choice", "score", "all"] as const) {
    const b = f.report.before[k];
    const a = f.report.after[k];
    if (b.n === 0) continue;
    out.push(
      `${k.padEnd(8)} ${String(b.n).padStart(4)}  ${pct(a.accuracy).padStart(8)}   ${b.ece.toFixed(3)} → ${a.ece.toFixed(3)}        ` +
        `${pct(b.coverage).padStart(6)} → ${pct(a.coverage).padEnd(6)}            ${pct(b.answered_accuracy).padStart(6)} → ${pct(a.answered_accuracy)}`,
    );
  }
  return `${out.join("\n")}\n`;
}

/**
 * `svc calibrate --data FILE.jsonl --name NAME --key <id|prefix> [--target 0.9] [--plot FILE.svg] [--json]`: fits a
 * calibration from labeled examples (one {state, question, answer} per line, the question in either API's shape)
 * with the model in use, stores it for that key (the same as POST /v1/calibrations), and prints the report.
 */
export async function calibrateCommand(config: Config, args: Args): Promise<number> {
  const file = flagString(args, "data");
  const name = flagString(args, "name");
  const keyRef = flagString(args, "key");
  if (!file || !name || !keyRef) throw new Error("calibrate needs --data FILE.jsonl, --name NAME and --key <id|prefix> (whose calibration it is)");
  const examples = readFileSync(file, "utf8")
    .split("\n")
    .map((l, i) => ({ l, i }))
    .filter(({ l }) => l.trim() !== "")
    .map(({ l, i }) => {
      try {
        return JSON.parse(l) as unknown;
      } catch (err) {
        throw new Error(`${file}:${i + 1}: not JSON: ${(err as Error).message}`);
      }
    });
  const target = flagString(args, "target");
  const store = await openAccountStore(config, false);
  const engine = createEngine({ workers: config.workers, dataDir: config.dataDir });
  try {
    const key = (await store.listKeys()).find((k) => k.id === keyRef || k.prefix === keyRef);
    if (!key) throw new Error(`no key with id or prefix ${keyRef}`);
    let req;
    try {
      req = parseCalibrationRequest({ name, examples, ...(target !== undefined ? { target_accuracy: Number(target) } : {}) });
    } catch (err) {
      if (err instanceof ApiError) {
        const body = err.toBody("en");
        throw new Error(body.detail.map((d) => `${d.loc.slice(1).join(".")}: ${d.msg}`).join("\n") || String(body.error.message));
      }
      throw err;
    }
    await engine.load();
    const { fitted, svg } = await fitCalibration(engine, req, async (state, q) => (await engine.run(engine.plan(state, [q])))[0]);
    await store.saveCalibration({ keyId: key.id, name: fitted.name, createdAt: fitted.created_at, body: JSON.stringify(fitted) });
    const plot = flagString(args, "plot");
    if (plot) writeFileSync(plot, svg);
    process.stdout.write(args.flags.has("json") ? `${JSON.stringify(fitted)}\n` : reportText(fitted));
    return 0;
  } finally {
    await engine.close();
    await store.close();
  }
}
