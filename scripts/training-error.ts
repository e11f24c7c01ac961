/**
 * How often a model folder answers its own training examples right: the project-authored examples (the schema of
 * eval/: id, lang, domain, state, type, instructions, criteria, label; a group is not needed) answered exactly as
 * `svc eval` answers labeled questions, counted per language and type, apart for the examples it trained on and
 * those of the training data's dev split, which it did not (scripts/train/build_examples.py: a state's sha1 mod 20
 * is 0). A model that misses examples it was trained on has either wrong labels or not learned them; `--wrong FILE`
 * writes the missed ones (file and line, split, label, the model's answer and its probability) for a person to read,
 * who can tell the two apart.
 *
 *   npx tsc -p tsconfig.json && node dist/scripts/training-error.js [--model models/builtin]
 *       [--data training/authored/written] [--kind noul] [--lang de] [--wrong FILE.jsonl] [--json]
 *
 * --data may be given more than once (every *.jsonl file of each folder). Runtime on 2 AMD EPYC cores: about 95
 * questions a second (the 20,866 questions of training/authored/written in 3.7 minutes).
 */
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { repeatedFlag } from "../src/cli/args.js";
import { DeciderEngine } from "../src/engine/decider/decider-engine.js";
import { datasetLines, toQuestion } from "../src/eval/dataset.js";
import { judge, scoreItems } from "../src/eval/metrics.js";

const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));

const flags = (name: string): string[] => repeatedFlag(process.argv, name);

/**
 * A JSON state as build_examples.py writes it (Python's json.dumps with ensure_ascii=False: ", " and ": " between
 * items), so that its hash picks the same split.
 */
function pythonJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(pythonJson).join(", ")}]`;
  if (v !== null && typeof v === "object") return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${pythonJson(x)}`).join(", ")}}`;
  return JSON.stringify(v);
}

/** The training data's split of a state: "dev" when the sha1 of its text is 0 mod 20 (build_examples.py's split_of). */
function splitOfState(state: unknown): "train" | "dev" {
  const text = typeof state === "string" ? state : pythonJson(state);
  return BigInt(`0x${createHash("sha1").update(text, "utf8").digest("hex")}`) % 20n === 0n ? "dev" : "train";
}

interface Row {
  lang: string;
  kind: string;
  /** Questions trained on, and how many of those it answers right. */
  train: { n: number; right: number };
  /** The training data's dev split, never trained on. */
  dev: { n: number; right: number };
  /** Trained on and missed with a top probability of at least 0.7. */
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
      const row = rows.get(key) ?? { lang: s.item.lang, kind: s.kind, train: { n: 0, right: 0 }, dev: { n: 0, right: 0 }, sureWrong: 0 };
      const split = splitOfState(s.item.state);
      row[split].n += 1;
      if (j.correct) row[split].right += 1;
      else {
        if (split === "train" && j.top >= 0.7) row.sureWrong += 1;
        const options = toQuestion(s.item).options.map((o) => o.key);
        const answer = s.kind === "noul" ? j.numbers.best === 1 : s.kind === "score" ? j.numbers.best : options[j.numbers.best];
        wrong.push({ where: items[i].where, split, id: s.item.id, label: s.item.label, answer, probability: Math.round(j.top * 1000) / 1000 });
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
    const pct = (x: { n: number; right: number }) => (x.n ? `${((100 * x.right) / x.n).toFixed(1)}% of ${x.n}` : "-");
    console.log(`${engine.info.backend} ${engine.info.hash}\nlang  type     trained on          dev split (not trained on)  trained on, missed at >= 0.7`);
    for (const r of table) {
      console.log(`${r.lang.padEnd(5)} ${r.kind.padEnd(7)}  ${pct(r.train).padEnd(18)}  ${pct(r.dev).padEnd(26)}  ${r.sureWrong}`);
    }
  } finally {
    await engine.close();
  }
}

await main();
