import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { UnigramSegmenter, useUnigramSegmenter } from "../src/engine/unigram.js";
import { jsonlFiles, jsonlStrings } from "./helpers/jsonl.js";

// The built-in model's tokenizer with the project's Unigram segmenter against the library's own segmentation:
// the same ids for every text of eval/ and a sample of the written training examples, and for odd input.

const json = JSON.parse(readFileSync("models/builtin/tokenizer.json", "utf8")) as { model: { vocab: [string, number][]; unk_id: number } };
/** A tokenizer.json around a model of its own: no added tokens, normalizer, pre-tokenizer or post-processor. */
const bare = (model: object): object => ({ ...json, added_tokens: [], normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, model });

const ODD = [
  "",
  " ",
  "   two  spaces   and more   ",
  "<unk> <s> </s> <pad> <mask>",
  "😀👍🏽 emoji, 𝐀𝐁𝐂 math letters",
  "漢字かなカナ한국어 ελληνικά русский עברית العربية",
  "\u0000\u0001\u0007 control characters",
  "ﬁﬂ ligatures, ½ ⅓ fractions, ① circled",
  "a".repeat(3000),
  "Ünïcödé façade naïve coöperate ÆØÅ æøå ß ẞ",
  "\u200b\u200d\u00a0zero width and no-break spaces",
  "ǅ ǈ ǋ titlecase; İstanbul ı",
  "e\u0301 combining accent vs é",
  '{"order": 1234, "items": ["a-1", "b_2"], "ok": true}',
];

test("the segmenter gives the library's ids for eval/, written training examples and odd text", () => {
  const lib = new Tokenizer(json, {});
  const ours = new Tokenizer(json, {});
  assert.equal(useUnigramSegmenter(ours, json), true);
  const texts = [...jsonlFiles("eval").flatMap(jsonlStrings), ...jsonlFiles(join("training", "authored", "written")).flatMap(jsonlStrings).filter((_, i) => i % 10 === 0), ...ODD];
  assert.ok(texts.length > 20_000, `${texts.length} texts`);
  let tokens = 0;
  for (const t of texts) {
    const want = lib.encode(t, { add_special_tokens: false }).ids;
    const got = ours.encode(t, { add_special_tokens: false }).ids;
    assert.deepEqual(got, want, JSON.stringify(t).slice(0, 200));
    tokens += want.length;
  }
  assert.ok(tokens > 200_000, `${tokens} tokens`);
});

test("the segmenter's Viterbi: the best-scoring path, the first of equal ones, unknown characters one by one", () => {
  const seg = new UnigramSegmenter(
    [
      ["<unk>", 0],
      ["a", -1],
      ["b", -1],
      ["ab", -1.5],
      ["abc", -5],
      ["c", -1],
      ["bc", -1],
      ["x", -3],
      ["xy", -3],
    ],
    0,
  );
  assert.deepEqual(seg.tokenize("ab"), ["ab"]); // -1.5 beats a + b at -2
  assert.deepEqual(seg.tokenize("abc"), ["a", "bc"]); // -2 beats ab + c (-2.5) and abc (-5)
  assert.deepEqual(seg.tokenize("xy"), ["xy"]);
  // "<unk>" scores the least score minus 10 (-15): z is unknown and stands alone; q as well, once each
  assert.deepEqual(seg.tokenize("zaq"), ["z", "a", "q"]);
  assert.deepEqual(seg.tokenize("😀a"), ["😀", "a"]);
  assert.deepEqual(seg.tokenize(""), []);
  // three paths of equal score (p q r, pq r, p qr): the one the library's lattice picks
  const vocab: [string, number][] = [
    ["<unk>", 0],
    ["p", -1],
    ["q", -1],
    ["r", -1],
    ["pq", -2],
    ["qr", -2],
  ];
  const lib = new Tokenizer(bare({ type: "Unigram", unk_id: 0, vocab }), {});
  const pieces = lib.encode("pqr", { add_special_tokens: false }).ids.map((i: number) => vocab[i][0]);
  assert.deepEqual(pieces, ["p", "qr"]);
  assert.deepEqual(new UnigramSegmenter(vocab, 0).tokenize("pqr"), pieces);
});

test("the segmenter is installed only for a Unigram model without byte fallback", () => {
  const small = { type: "Unigram", unk_id: 0, vocab: [["<unk>", 0], ["a", -1]] };
  assert.equal(useUnigramSegmenter(new Tokenizer(bare(small), {}), bare(small)), true);
  const bytes = { ...small, byte_fallback: true };
  assert.equal(useUnigramSegmenter(new Tokenizer(bare(bytes), {}), bare(bytes)), false);
  const wordpiece = { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab: { "[UNK]": 0, a: 1 } };
  assert.equal(useUnigramSegmenter(new Tokenizer(bare(wordpiece), {}), bare(wordpiece)), false);
});
