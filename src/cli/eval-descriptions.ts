import { createEngine } from "../engine/registry.js";
import type { Config } from "../config.js";
import { loadDataset, withoutDescriptions, type DevItem } from "../eval/dataset.js";
import { accuracy, judge, scoreItems } from "../eval/metrics.js";
import { splitOf, type Split } from "../eval/split.js";
import type { Args } from "./args.js";
import { languagesOf, pct } from "./eval-format.js";

const KINDS = ["noul", "choice"] as const;

interface Cell {
  n: number;
  described: number;
  bare: number;
}

/**
 * `svc eval --descriptions`: what describing the answers buys. Every question of the set that has
 * option descriptions (choice) or true/false meanings (noul) is answered twice by the same model,
 * as written and with them removed, and the two accuracies are printed side by side per language
 * and type: a paired comparison on the same states and questions.
 */
export async function evalDescriptions(config: Config, args: Args, dir: string, split: "all" | Split): Promise<number> {
  const pairs = loadDataset(dir)
    .filter((item) => split === "all" || splitOf(item.group) === split)
    .map((item) => ({ item, bare: withoutDescriptions(item) }))
    .filter((p): p is { item: DevItem; bare: DevItem } => p.bare !== null);
  const engine = createEngine({ workers: config.workers, dataDir: config.dataDir });
  await engine.load();
  try {
    const judgeAll = async (items: DevItem[]) =>
      (await scoreItems(engine, items)).map((s) => ({ lang: s.item.lang, kind: s.kind, j: judge(s, engine.calibration) }));
    const asWritten = await judgeAll(pairs.map((p) => p.item));
    const bare = await judgeAll(pairs.map((p) => p.bare));
    const cell = (f: (r: (typeof asWritten)[number]) => boolean): Cell => {
      const at = asWritten.flatMap((r, i) => (f(r) ? [i] : []));
      return { n: at.length, described: accuracy(at.map((i) => asWritten[i].j)), bare: accuracy(at.map((i) => bare[i].j)) };
    };
    const langs = languagesOf(asWritten.map((r) => r.lang));
    const byLang = Object.fromEntries(
      [...langs, "all"].map((l) => [
        l,
        Object.fromEntries([...KINDS, "all"].map((k) => [k, cell((r) => (l === "all" || r.lang === l) && (k === "all" || r.kind === k))])),
      ]),
    );
    const result = { backend: engine.info.backend, dir, split, questions: byLang.all.all.n, by_lang: byLang };
    if (args.flags.has("json")) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return 0;
    }
    const out = [
      `model ${result.backend}, ${result.questions} questions with descriptions (split: ${split}), each answered as written and without them`,
      "",
      "accuracy described / bare (n): choice options' descriptions, noul true/false meanings",
      `lang   ${[...KINDS, "all"].map((k) => k.padEnd(23)).join("")}`.trimEnd(),
      ...[...langs, "all"].map(
        (l) => `${l.padEnd(6)} ${[...KINDS, "all"].map((k) => {
          const c: Cell = byLang[l][k];
          return `${pct(c.described)} / ${pct(c.bare)} (${String(c.n).padStart(3)})`;
        }).join("  ")}`,
      ),
    ];
    process.stdout.write(`${out.join("\n")}\n`);
    return 0;
  } finally {
    await engine.close();
  }
}
