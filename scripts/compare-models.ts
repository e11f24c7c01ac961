/**
 * Answers labeled questions with two model folders and compares them question by question: for every language and
 * type, how many each gets right, how many only the candidate gets right (gained) and only the baseline (lost), and
 * the two-sided exact sign test over those. Each folder is read with its own calibration.json.
 *
 *   npx tsc -p tsconfig.json && node dist/scripts/compare-models.js --candidate DIR [--baseline models/builtin]
 *       [--data eval/dev:test] [--data eval/held-out] [--json]
 *
 * --data DIR[:fit|test] may be given more than once (default eval/dev:test); without a split every question counts.
 * Runtime on 2 cores: about a minute per 500 questions per model.
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { repeatedFlag } from "../src/cli/args.js";
import { DeciderEngine } from "../src/engine/decider/decider-engine.js";
import { tallies, type Pair } from "../src/eval/compare.js";
import { loadDataset, type DevItem } from "../src/eval/dataset.js";
import { judge, scoreItems } from "../src/eval/metrics.js";
import { splitOf } from "../src/eval/split.js";

const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));

const flags = (name: string): string[] => repeatedFlag(process.argv, name);

/** The questions of DIR[:split]. */
function questions(spec: string): { set: string; items: DevItem[] } {
  const m = /^(.*?)(?::(fit|test))?$/.exec(spec)!;
  return { set: spec, items: loadDataset(resolve(root, m[1])).filter((item) => m[2] === undefined || splitOf(item.group) === m[2]) };
}

async function rightOrWrong(dir: string, sets: ReturnType<typeof questions>[]): Promise<{ backend: string; right: boolean[][] }> {
  const engine = new DeciderEngine(resolve(root, dir));
  await engine.load();
  try {
    const right: boolean[][] = [];
    for (const s of sets) right.push((await scoreItems(engine, s.items)).map((x) => judge(x, engine.calibration).correct));
    return { backend: `${engine.info.backend} ${engine.info.hash}`, right };
  } finally {
    await engine.close();
  }
}

async function main(): Promise<void> {
  const [candidate] = flags("candidate");
  if (candidate === undefined) throw new Error("--candidate DIR is required");
  const baseline = flags("baseline")[0] ?? join("models", "builtin");
  const specs = flags("data");
  const sets = (specs.length ? specs : ["eval/dev:test"]).map(questions);
  const base = await rightOrWrong(baseline, sets);
  const cand = await rightOrWrong(candidate, sets);
  const report = sets.map((s, si) => {
    const pairs: Pair[] = s.items.map((item, i) => ({ lang: item.lang, kind: item.type, baseline: base.right[si][i], candidate: cand.right[si][i] }));
    return { set: s.set, pairs };
  });
  const all = report.flatMap((r) => r.pairs);
  const result = {
    baseline: { dir: baseline, model: base.backend },
    candidate: { dir: candidate, model: cand.backend },
    sets: [...report.map((r) => ({ set: r.set, rows: tallies(r.pairs) })), ...(report.length > 1 ? [{ set: "together", rows: tallies(all) }] : [])],
  };
  if (process.argv.includes("--json")) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  console.log(`baseline  ${result.baseline.dir} (${result.baseline.model})\ncandidate ${result.candidate.dir} (${result.candidate.model})`);
  for (const s of result.sets) {
    console.log(`\n${s.set}\ngroup        n  baseline  candidate  gained  lost  sign test p`);
    for (const { group, tally: t } of s.rows) {
      console.log(
        `${group.padEnd(7)} ${String(t.n).padStart(6)} ${String(t.baseline).padStart(9)} ${String(t.candidate).padStart(10)} ` +
          `${String(t.gained).padStart(7)} ${String(t.lost).padStart(5)}  ${t.p.toFixed(3).padStart(11)}`,
      );
    }
  }
}

await main();
