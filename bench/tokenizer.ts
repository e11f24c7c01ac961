/**
 * Tokenizing speed of the built-in model's tokenizer.json: the tokenizer library's own Unigram segmentation
 * against src/engine/unigram.ts, in the same run. Texts: every string of eval/ (states, questions, option keys
 * and descriptions), each tokenized once per round as planning does (no cache), the two alternating round by
 * round. Prints µs per token and per text for each, their ratio, and whether every id agreed.
 *
 *   npm run bench:tokenizer [-- --rounds 6]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { useUnigramSegmenter } from "../src/engine/unigram.js";
import { ROOT } from "../test/helpers/service.js";
import { jsonlFiles, jsonlStrings } from "../test/helpers/jsonl.js";
import { header, machine, numberFlag, percentile, printTable, round, writeResult } from "./lib.js";

function main(): void {
  const m = machine();
  header("bench:tokenizer: the library's Unigram segmentation against src/engine/unigram.ts", m);
  const rounds = numberFlag("rounds", 6);
  const json = JSON.parse(readFileSync(join(ROOT, "models", "builtin", "tokenizer.json"), "utf8")) as object;
  const library = new Tokenizer(json, {});
  const ours = new Tokenizer(json, {});
  if (!useUnigramSegmenter(ours, json)) throw new Error("the built-in tokenizer.json is not a Unigram model");
  const texts = jsonlFiles(join(ROOT, "eval")).flatMap(jsonlStrings);
  const encode = (t: Tokenizer, s: string): number[] => t.encode(s, { add_special_tokens: false }).ids;
  let tokens = 0;
  let differ = 0;
  for (const s of texts) {
    const a = encode(library, s);
    const b = encode(ours, s); // also warms both up
    tokens += a.length;
    if (a.length !== b.length || a.some((x, i) => x !== b[i])) differ++;
  }
  const times: Record<"library" | "ours", number[]> = { library: [], ours: [] };
  for (let r = 0; r < rounds; r++) {
    for (const [name, t] of (r % 2 === 0 ? [["library", library], ["ours", ours]] : [["ours", ours], ["library", library]]) as ["library" | "ours", Tokenizer][]) {
      const t0 = performance.now();
      for (const s of texts) encode(t, s);
      times[name].push(performance.now() - t0);
    }
  }
  const rows = (["library", "ours"] as const).map((name) => {
    const ms = percentile(times[name], 50);
    return { segmentation: name, texts: texts.length, tokens, roundMs: round(ms, 1), usPerToken: round((ms * 1000) / tokens, 2), usPerText: round((ms * 1000) / texts.length, 1) };
  });
  printTable(rows.map((r) => ({ segmentation: r.segmentation, texts: r.texts, tokens: r.tokens, "round p50 ms": r.roundMs, "µs/token": r.usPerToken, "µs/text": r.usPerText })));
  const ratio = round(rows[1].roundMs / rows[0].roundMs, 3);
  console.log(`\nours / library: ${ratio}; texts whose ids differ: ${differ}`);
  writeResult("tokenizer", m, { rounds, rows, ratio, differ });
}

main();
