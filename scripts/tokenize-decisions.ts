/**
 * Turns labeled decision examples (the JSON-lines schema of eval/dev) into the cross-encoder's token
 * sequences, with the engine's own parser, plan and cut (src/engine/builtin/cross.ts), so the model
 * trains on exactly what it reads when serving.
 *
 *   npx tsc -p tsconfig.json && node dist/scripts/tokenize-decisions.js [--split fit] OUT.jsonl IN.jsonl [IN2.jsonl ...]
 *
 * One output line per example: {"id", "lang", "type", "rows": [[ids...], ...], "label": index of the
 * gold row}; noul rows are [yes side, no side] (label 0 when true). Lines that the API would refuse
 * are skipped and counted. `--split fit` keeps only the examples of eval/dev's fit half (by group,
 * src/eval/split.ts), for the trainer's --watch: the test half never reaches training.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { BuiltinEngine } from "../src/engine/builtin/builtin-engine.js";
import { toQuestion, labelIndex, type DevItem } from "../src/eval/dataset.js";
import { splitOf, type Split } from "../src/eval/split.js";
import { renderText } from "../src/questions/render.js";

const args = process.argv.slice(2);
const splitAt = args.indexOf("--split");
const only = splitAt >= 0 ? (args.splice(splitAt, 2)[1] as Split) : undefined;
const [out, ...inputs] = args;
if (!out || inputs.length === 0) {
  process.stderr.write("usage: node dist/scripts/tokenize-decisions.js OUT.jsonl IN.jsonl [...]\n");
  process.exit(2);
}
const engine = new BuiltinEngine({ workers: 1 });
const lines: string[] = [];
let skipped = 0;
for (const file of inputs) {
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const item = JSON.parse(line) as DevItem;
    if (only && splitOf(item.group ?? item.id) !== only) continue;
    try {
      const q = toQuestion(item);
      const plan = engine.plan(renderText(item.state), [q]);
      const rows = engine.crossRows(plan)[0];
      const gold = labelIndex(item, q);
      const label = item.type === "noul" ? 1 - gold : gold;
      lines.push(JSON.stringify({ id: item.id, lang: item.lang, type: item.type, rows: rows.map((r) => Array.from(r)), label }));
    } catch {
      skipped++;
    }
  }
}
writeFileSync(out, `${lines.join("\n")}\n`);
process.stdout.write(`${JSON.stringify({ examples: lines.length, skipped })}\n`);
await engine.close();
