/**
 * Public benchmarks for `svc eval --public DATA`: sets the shipped model never trained on, asked as
 * decision questions, so they run through the same engine and answer math as eval/dev.
 *
 * - NLI as noul ("does the text imply this statement?"; entailment = yes, neutral and contradiction =
 *   no): MultiNLI mismatched dev (en), XNLI test (es, fr, de), InferBR test (pt).
 * - Zero-shot intents: CLINC150 test utterances of the 40 intents held out of training entirely
 *   (heldOutIntents: the same pick as scripts/build-decision-examples.py), each a choice among those 40.
 *
 * DATA is a folder laid out as the project's data sets (mnli-snli-dev/, xnli/, inferbr-pt/, clinc150/),
 * files compressed with xz (read with the system's `xz`). Each set is sampled with a fixed seed.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseCsv } from "./csv.js";
import type { DevItem } from "./dataset.js";

export interface PublicSet {
  name: string;
  lang: string;
  items: DevItem[];
}

const NLI_QUESTION: Record<string, string> = {
  en: "Does the text imply this statement: {h}",
  es: "¿Implica el texto esta afirmación: {h}?",
  fr: "Le texte implique-t-il cette affirmation : {h} ?",
  de: "Folgt aus dem Text diese Aussage: {h}?",
  pt: "O texto implica esta afirmação: {h}?",
};

function xz(path: string): string {
  return execFileSync("xz", ["-dc", path], { encoding: "utf8", maxBuffer: 1 << 28 });
}

function sha1Head(text: string): number {
  return parseInt(createHash("sha1").update(text, "utf8").digest("hex").slice(0, 8), 16);
}

/** 40 CLINC150 intents by hash: never trained on (see scripts/build-decision-examples.py). */
export function heldOutIntents(names: string[]): string[] {
  return [...names].sort((a, b) => sha1Head(`held-out:${a}`) - sha1Head(`held-out:${b}`)).slice(0, 40);
}

/** A seeded sample of n items (the same every run). */
function sample<T>(rows: T[], n: number, key: (row: T) => string): T[] {
  return [...rows].sort((a, b) => sha1Head(`sample:${key(a)}`) - sha1Head(`sample:${key(b)}`)).slice(0, n);
}

function nliItem(set: string, lang: string, i: number, premise: string, hypothesis: string, entailed: boolean): DevItem {
  const h = hypothesis.trim().replace(/[.?!]+$/, "");
  return {
    id: `${set}-${i}`,
    group: `${set}-${i}`,
    lang,
    domain: "nli",
    state: premise,
    type: "noul",
    instructions: NLI_QUESTION[lang].replace("{h}", h),
    criteria: null,
    label: entailed,
  };
}

function nliSets(dir: string, perSet: number): PublicSet[] {
  const sets: PublicSet[] = [];
  const mnli = parseCsv(xz(join(dir, "mnli-snli-dev", "multinli_1.0_dev_mismatched.csv.xz"))).slice(1).filter((r) => r.length >= 4 && r[1] && r[2]);
  sets.push({
    name: "MultiNLI mismatched (en)",
    lang: "en",
    items: sample(mnli, perSet, (r) => r[0]).map((r, i) => nliItem("mnli-mm", "en", i, r[1], r[2], r[3] === "entailment")),
  });
  for (const lang of ["es", "fr", "de"]) {
    const rows = xz(join(dir, "xnli", `xnli_test_${lang}.tsv.xz`)).split("\n").slice(1).map((l) => l.split("\t")).filter((r) => r.length >= 4 && r[1] && r[2]);
    // XNLI labels: 0 entailment, 1 neutral, 2 contradiction.
    sets.push({
      name: `XNLI test (${lang})`,
      lang,
      items: sample(rows, perSet, (r) => r[0]).map((r, i) => nliItem(`xnli-${lang}`, lang, i, r[1], r[2], r[3].trim() === "0")),
    });
  }
  const inferbr = parseCsv(xz(join(dir, "inferbr-pt", "test.csv.xz"))).slice(1).filter((r) => r.length >= 4 && r[1] && r[2]);
  // InferBR labels: 0 contradiction, 1 entailment, 2 neutral.
  sets.push({
    name: "InferBR test (pt)",
    lang: "pt",
    items: sample(inferbr, perSet, (r) => r[0]).map((r, i) => nliItem("inferbr", "pt", i, r[1], r[2], r[3].trim() === "1")),
  });
  return sets;
}

function intentSet(dir: string, perIntent: number): PublicSet {
  const clinc = JSON.parse(xz(join(dir, "clinc150", "data_full.json.xz"))) as Record<string, [string, string][]>;
  const names = [...new Set(clinc.train.map(([, intent]) => intent))].filter((n) => n !== "oos").sort();
  const held = heldOutIntents(names);
  const criteria = Object.fromEntries([...held].sort().map((n) => [n, ""]));
  const items: DevItem[] = [];
  for (const intent of held) {
    const rows = sample(clinc.test.filter(([, i]) => i === intent), perIntent, ([text]) => text);
    for (const [text] of rows) {
      const n = items.length;
      items.push({ id: `clinc-held-${n}`, group: `clinc-held-${n}`, lang: "en", domain: "intent", state: text, type: "choice", instructions: "What does the user want?", criteria, label: intent });
    }
  }
  return { name: "Held-out intents, zero-shot (CLINC150, 40 options)", lang: "en", items };
}

export function publicSets(dir: string, opts: { perSet?: number; perIntent?: number } = {}): PublicSet[] {
  for (const sub of ["mnli-snli-dev", "xnli", "inferbr-pt", "clinc150"]) {
    if (!existsSync(join(dir, sub))) throw new Error(`--public ${dir}: no ${sub}/ folder there (the data sets' folder is expected)`);
  }
  return [...nliSets(dir, opts.perSet ?? 1000), intentSet(dir, opts.perIntent ?? 10)];
}
