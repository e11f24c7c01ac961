import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

// The project-authored training examples (training/authored: examples.jsonl composed by
// scripts/author-decision-examples.py, and written/*.jsonl written one by one) must be valid and
// kept strictly apart from eval/dev: no shared texts, no near-duplicate states, no shared question phrasings; and
// apart from the states of eval/first-hour and eval/held-out.

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));

type Example = {
  id: string;
  lang: string;
  domain: string;
  state: unknown;
  type: string;
  instructions: string | null;
  criteria: unknown;
  label: unknown;
};

const readJsonl = (file: string): Example[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Example);

const writtenDir = root("training/authored/written");
const authored = [
  ...readJsonl(root("training/authored/examples.jsonl")),
  ...readdirSync(writtenDir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .flatMap((f) => readJsonl(`${writtenDir}/${f}`)),
];
// MultiNLI pairs translated into es/fr/de (training/translated), checked against eval/dev like the authored examples
// (premise as the state, hypothesis as the question).
type Translated = { id: string; lang: string; premise: string; hypothesis: string; label: string };
const translatedDir = root("training/translated");
const translated: Translated[] = readdirSync(translatedDir)
  .filter((f) => f.endsWith(".jsonl"))
  .sort()
  .flatMap((f) => readJsonl(`${translatedDir}/${f}`) as unknown as Translated[]);
const translatedAsExamples: Example[] = translated.map((t) => ({
  id: `mnli-${t.lang}-${t.id}`,
  lang: t.lang,
  domain: "nli",
  state: t.premise,
  type: "noul",
  instructions: t.hypothesis,
  criteria: null,
  label: t.label === "entailment",
}));
const trained = [...authored, ...translatedAsExamples];
const evalFolder = (set: string): Example[] =>
  readdirSync(root(`eval/${set}`))
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .flatMap((f) => readJsonl(root(`eval/${set}/${f}`)));
// eval/dev shares nothing with the training data: no state, question, option or level text.
const evalSet = evalFolder("dev");
// eval/first-hour and eval/held-out share no state with the training data (exact, near-duplicate or an 8-word run),
// but may share common question wordings and level names ("How frustrated is the customer?", "1 star") as real
// callers do (eval/held-out/SOURCE.md).
const firstHour = evalFolder("first-hour");
const heldOut = evalFolder("held-out");

/** Lower-case, every run of non-letters/non-digits becomes one space. */
const norm = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
const words = (s: string) => norm(s).split(" ").filter((w) => w !== "");
const stateText = (s: unknown): string =>
  typeof s === "string" ? s : s && typeof s === "object" ? Object.values(s as Record<string, unknown>).map(stateText).join(" ") : "";
const descriptions = (c: unknown): string[] =>
  Array.isArray(c) ? c.map(String) : c && typeof c === "object" ? Object.values(c as Record<string, unknown>).filter((v) => v != null).map(String) : [];
const ngrams = (ws: string[], n: number): string[] => {
  const out: string[] = [];
  for (let i = 0; i + n <= ws.length; i++) out.push(ws.slice(i, i + n).join(" "));
  return out;
};

test("authored data: size and language mix", () => {
  const byLang = new Map<string, number>();
  const byType = new Map<string, number>();
  const byDomain = new Map<string, number>();
  for (const e of authored) {
    byLang.set(e.lang, (byLang.get(e.lang) ?? 0) + 1);
    byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
    byDomain.set(e.domain, (byDomain.get(e.domain) ?? 0) + 1);
  }
  const nonEn = authored.length - (byLang.get("en") ?? 0);
  console.log(`authored examples: ${authored.length}, non-English: ${nonEn} (${((100 * nonEn) / authored.length).toFixed(1)}%)`);
  console.log("by language:", Object.fromEntries([...byLang].sort()));
  console.log("by type:", Object.fromEntries([...byType].sort()));
  console.log("by domain:", Object.fromEntries([...byDomain].sort()));
  console.log("distinct states:", new Set(authored.map((e) => JSON.stringify(e.state))).size);
  assert.ok(authored.length >= 5000, `only ${authored.length} examples`);
  assert.ok(nonEn / authored.length >= 0.25, `non-English share ${nonEn / authored.length}`);
  for (const lang of ["es", "pt", "fr", "de"]) assert.ok((byLang.get(lang) ?? 0) >= 350, `${lang}: ${byLang.get(lang) ?? 0}`);
});

test("authored data: every example is valid for its type", () => {
  const ids = new Set<string>();
  for (const e of authored) {
    const where = JSON.stringify(e).slice(0, 200);
    assert.ok(typeof e.id === "string" && !ids.has(e.id), `duplicate or missing id: ${where}`);
    ids.add(e.id);
    assert.ok(["en", "es", "pt", "fr", "de"].includes(e.lang), where);
    assert.ok(typeof e.domain === "string" && e.domain !== "", where);
    assert.ok(stateText(e.state).trim() !== "", `empty state: ${where}`);
    assert.ok(e.instructions === null || (typeof e.instructions === "string" && e.instructions.trim() !== ""), where);
    if (e.type === "noul") {
      assert.equal(typeof e.label, "boolean", where);
      if (e.criteria !== null) {
        const c = e.criteria as Record<string, unknown>;
        assert.deepEqual(Object.keys(c).sort(), ["false", "true"], where);
        assert.ok(typeof c.true === "string" && typeof c.false === "string", where);
      }
    } else if (e.type === "choice") {
      assert.ok(e.criteria && typeof e.criteria === "object" && !Array.isArray(e.criteria), where);
      const c = e.criteria as Record<string, unknown>;
      const keys = Object.keys(c);
      assert.ok(keys.length >= 2 && keys.length <= (e.domain === "long_list" ? 255 : 8), where);
      for (const k of keys) {
        assert.match(k, /^[a-z][a-z0-9_]*$/, where);
        assert.equal(typeof c[k], "string", where);
      }
      assert.ok(typeof e.label === "string" && keys.includes(e.label), `label not an option: ${where}`);
    } else if (e.type === "score") {
      assert.ok(Array.isArray(e.criteria) && e.criteria.length >= 3 && e.criteria.length <= 5, where);
      for (const l of e.criteria as unknown[]) assert.ok(typeof l === "string" && l.trim() !== "", where);
      assert.ok(Number.isInteger(e.label) && (e.label as number) >= 0 && (e.label as number) < (e.criteria as unknown[]).length, where);
    } else {
      assert.fail(`unknown type: ${where}`);
    }
  }
});

test("translated MultiNLI pairs: valid, one per pair and language", () => {
  const seen = new Set<string>();
  const byLang = new Map<string, number>();
  for (const t of translated) {
    const where = JSON.stringify(t).slice(0, 200);
    assert.deepEqual(Object.keys(t).sort(), ["hypothesis", "id", "label", "lang", "premise"], where);
    assert.match(t.id, /^[0-9]+[enc]$/, where);
    assert.ok(["es", "fr", "de"].includes(t.lang), where);
    assert.ok(["entailment", "neutral", "contradiction"].includes(t.label), where);
    assert.ok(t.premise.trim() !== "" && t.hypothesis.trim() !== "", where);
    assert.ok(!seen.has(`${t.lang}:${t.id}`), `duplicate: ${where}`);
    seen.add(`${t.lang}:${t.id}`);
    byLang.set(t.lang, (byLang.get(t.lang) ?? 0) + 1);
  }
  console.log("translated pairs by language:", Object.fromEntries([...byLang].sort()));
  for (const lang of ["es", "fr", "de"]) assert.ok((byLang.get(lang) ?? 0) >= 500, `${lang}: ${byLang.get(lang) ?? 0}`);
});

test("authored and translated data: no text shared with eval/dev", () => {
  const evalTexts = new Set<string>();
  for (const e of evalSet) {
    evalTexts.add(norm(stateText(e.state)));
    if (e.instructions) evalTexts.add(norm(e.instructions));
    for (const d of descriptions(e.criteria)) if (norm(d) !== "") evalTexts.add(norm(d));
  }
  const hits: string[] = [];
  for (const e of trained) {
    const texts = [stateText(e.state), e.instructions ?? "", ...descriptions(e.criteria)];
    for (const t of texts) if (norm(t) !== "" && evalTexts.has(norm(t))) hits.push(`${e.id}: ${t}`);
  }
  console.log(`exact matches with eval/dev texts (states, questions, options, levels): ${hits.length}`);
  assert.deepEqual(hits.slice(0, 20), []);
});

/** Trained states near the states of `set` (word 3-gram Jaccard >= 0.5, or 8 consecutive words shared), and trained
 * questions sharing 6 consecutive words with its questions. */
function nearTrained(set: Example[]): { nearDup: string[]; run8: string[]; run6: string[]; maxJ: number; maxPair: string } {
  // word 3-gram Jaccard similarity through an inverted index over the set's states
  const evalStates = set.map((e) => words(stateText(e.state)));
  const evalTri = evalStates.map((ws) => new Set(ngrams(ws, 3)));
  const index = new Map<string, number[]>();
  evalTri.forEach((grams, i) => {
    for (const g of grams) {
      const l = index.get(g);
      if (l) l.push(i);
      else index.set(g, [i]);
    }
  });
  const eval8 = new Set(evalStates.flatMap((ws) => ngrams(ws, 8)));
  const eval6q = new Set(set.flatMap((e) => (e.instructions ? ngrams(words(e.instructions), 6) : [])));

  let maxJ = 0;
  let maxPair = "";
  const nearDup: string[] = [];
  const run8: string[] = [];
  const run6: string[] = [];
  const seen = new Set<string>();
  for (const e of trained) {
    const text = stateText(e.state);
    if (!seen.has(text)) {
      seen.add(text);
      const ws = words(text);
      const tri = new Set(ngrams(ws, 3));
      const shared = new Map<number, number>();
      for (const g of tri) for (const i of index.get(g) ?? []) shared.set(i, (shared.get(i) ?? 0) + 1);
      for (const [i, s] of shared) {
        const j = s / (tri.size + evalTri[i].size - s);
        if (j > maxJ) {
          maxJ = j;
          maxPair = `${e.id} ~ ${set[i].id}`;
        }
        if (j >= 0.5) nearDup.push(`${e.id} ~ ${set[i].id} (${j.toFixed(2)})`);
      }
      for (const g of ngrams(ws, 8)) if (eval8.has(g)) run8.push(`${e.id}: "${g}"`);
    }
    if (e.instructions) for (const g of ngrams(words(e.instructions), 6)) if (eval6q.has(g)) run6.push(`${e.id}: "${g}"`);
  }
  return { nearDup, run8, run6, maxJ, maxPair };
}

test("authored and translated data: no near-duplicate states or questions of eval/dev", () => {
  const { nearDup, run8, run6, maxJ, maxPair } = nearTrained(evalSet);
  console.log(`max word-3-gram Jaccard of an authored state with an eval/dev state: ${maxJ.toFixed(3)}${maxPair ? ` (${maxPair})` : ""}`);
  console.log(`states with Jaccard >= 0.5: ${nearDup.length}; states sharing 8 consecutive words: ${run8.length}; questions sharing 6 consecutive words: ${run6.length}`);
  assert.deepEqual(nearDup.slice(0, 20), []);
  assert.deepEqual(run8.slice(0, 20), []);
  assert.deepEqual(run6.slice(0, 20), []);
});

for (const [name, set, size] of [["eval/first-hour", firstHour, 40], ["eval/held-out", heldOut, 388]] as const) {
  test(`${name}: no state of it is in the training data, near-duplicate of one or shares 8 consecutive words with one`, () => {
    assert.equal(set.length, size);
    const trainedStates = new Set(trained.map((e) => norm(stateText(e.state))));
    assert.deepEqual(set.filter((h) => trainedStates.has(norm(stateText(h.state)))).map((h) => h.id), []);
    const { nearDup, run8, maxJ, maxPair } = nearTrained(set);
    console.log(`${name}: max word-3-gram Jaccard with a trained state ${maxJ.toFixed(3)} (${maxPair})`);
    assert.deepEqual(nearDup.slice(0, 20), []);
    assert.deepEqual(run8.slice(0, 20), []);
  });
}
