/**
 * How often a model folder answers its own training examples right: the project-authored examples (the schema of
 * eval/: id, lang, domain, state, type, instructions, criteria, label; a group is not needed) answered exactly as
 * `svc eval` answers labeled questions, counted per language and type. A model that misses many of the examples it
 * was trained on is limited by fitting, not by new wording; `--wrong FILE` writes the missed ones (file and line,
 * label, the model's answer and its probability) for a person to read, who can tell a wrong label from a missed one.
 *
 *   npx tsc -p tsconfig.json && node dist/scripts/training-error.js [--model models/builtin]
 *       [--data training/authored/written] [--kind noul] [--lang de] [--wrong FILE.jsonl] [--json]
 *
 * --data may be given more than once (every *.jsonl file of each folder). Runtime on 2 AMD EPYC cores: about 95
 * questions a second (the 20,866 questions of training/authored/written in 3.7 minutes).
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DeciderEngine } from "../src/engine/decider/decider-engine.js";
import { datasetLines, toQuestion } from "../src/eval/dataset.js";
import { judge, scoreItems } from "../src/eval/metrics.js";

const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));

function flags(name: string): string[] {
  const out: string[] = [];
  process.argv.forEach((a, i) => {
    if (a === `--${name}`) {
      const v = process.argv[i + 1];
      if (v === undefined || v.startsWith("--")) throw new Error(`--${name} needs a value`);
      out.push(v);
    }
  });
  return out;
}

interface Row {
  lang: string;
  kind: string;
  n: number;
  right: number;
  /** Missed with a top probability of at least 0.7. */
  sureWrong: number;
}

async function main(): Promise<void> {
  const model = resolve(root, flags("model")[0] ?? join("models", "builtin"));
  const folders = flags("data");
  const [kind] = flags("kind");
  const [lang] = flags("lang");
  const items = (folders.length ? folders : [join("training", "authored", "written")])
    .flatMap((f) => datasetLines(resolve(root, f)).map((x) => ({ item: x.item, where: `${f}/${x.file}:${x.line}` })))
    .filter(({ item }) => (kind === undefined || item.type === kind) && (lang === undefined || item.lang === lang));
  const engine = new DeciderEngine(model);
  await engine.load();
  try {
    const scored = await scoreItems(engine, items.map((x) => x.item));
    const rows = new Map<string, Row>();
    const wrong: object[] = [];
    scored.forEach((s, i) => {
      const j = judge(s, engine.calibration);
      const key = `${s.item.lang}/${s.kind}`;
      const row = rows.get(key) ?? { lang: s.item.lang, kind: s.kind, n: 0, right: 0, sureWrong: 0 };
      row.n += 1;
      if (j.correct) row.right += 1;
      else {
        if (j.top >= 0.7) row.sureWrong += 1;
        const options = toQuestion(s.item).options.map((o) => o.key);
        const answer = s.kind === "noul" ? j.numbers.best === 1 : s.kind === "score" ? j.numbers.best : options[j.numbers.best];
        wrong.push({ where: items[i].where, id: s.item.id, label: s.item.label, answer, probability: Math.round(j.top * 1000) / 1000 });
      }
      rows.set(key, row);
    });
    const table = [...rows.values()].sort((a, b) => a.lang.localeCompare(b.lang) || a.kind.localeCompare(b.kind));
    const [wrongFile] = flags("wrong");
    if (wrongFile) writeFileSync(wrongFile, wrong.map((w) => JSON.stringify(w)).join("\n") + (wrong.length ? "\n" : ""));
    if (process.argv.includes("--json")) {
      process.stdout.write(`${JSON.stringify({ model: `${engine.info.backend} ${engine.info.hash}`, rows: table }, null, 2)}\n`);
      return;
    }
    console.log(`${engine.info.backend} ${engine.info.hash}\nlang  type        n   right  accuracy  missed at >= 0.7`);
    for (const r of table) {
      console.log(`${r.lang.padEnd(5)} ${r.kind.padEnd(7)} ${String(r.n).padStart(5)} ${String(r.right).padStart(7)} ${(r.right / r.n).toFixed(3).padStart(9)} ${String(r.sureWrong).padStart(17)}`);
    }
  } finally {
    await engine.close();
  }
}

await main();
