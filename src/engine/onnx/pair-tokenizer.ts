import { Tokenizer } from "@huggingface/tokenizers";
import { useUnigramSegmenter } from "../unigram.js";

/**
 * The special tokens a model's tokenizer puts around a (premise, hypothesis) pair, learned from the
 * tokenizer itself: ids = prefix + A + middle + B + suffix (e.g. [CLS] A [SEP] B [SEP] for BERT,
 * <s> A </s></s> B </s> for XLM-R), with the token type of each part.
 */
export interface PairLayout {
  prefix: Int32Array;
  middle: Int32Array;
  suffix: Int32Array;
  prefixTypes: Int32Array;
  middleTypes: Int32Array;
  suffixTypes: Int32Array;
  typeA: number;
  typeB: number;
  /** prefix + middle + suffix lengths: tokens every pair pays for. */
  specials: number;
}

/** One pair as token ids: the state part is already cut; hypothesis parts are read in order. */
export interface PairIds {
  state: Int32Array;
  hypothesis: Int32Array[];
  /** Total tokens read, special tokens included. */
  length: number;
}

const EMPTY = new Int32Array(0);
/** A state needs no more than the head of a long text; tokenizing 64 KiB in full would cost ~20x more. */
const HEAD_CHARS = 4096;
/** Caches token ids of texts up to this length (options, questions and states repeat across requests). */
const CACHE_TEXT_CHARS = HEAD_CHARS;
const CACHE_ENTRIES = 50_000;

function indexOf(hay: number[], needle: number[], from: number): number {
  outer: for (let i = from; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function equal(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Tokenizes pairs the way the model was trained to read them, counting every token it reads. */
export class PairTokenizer {
  readonly layout: PairLayout;
  /** Prepended to every hypothesis part after the first, so that parts tokenized alone join as if tokenized together. */
  private readonly joiner: string;
  private readonly cache = new Map<string, Int32Array>();
  readonly padId: number;

  constructor(
    private readonly tokenizer: Tokenizer,
    padIdFromConfig: number | null,
    /** No pair reads more tokens than this, so no text needs more ids than this. */
    private readonly maxTokens: number,
  ) {
    this.layout = this.learnLayout();
    this.joiner = this.learnJoiner();
    this.padId = padIdFromConfig ?? this.findPad();
  }

  static fromJson(tokenizerJson: object, tokenizerConfig: object, padIdFromConfig: number | null, maxTokens: number): PairTokenizer {
    const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    useUnigramSegmenter(tokenizer, tokenizerJson);
    return new PairTokenizer(tokenizer, padIdFromConfig, maxTokens);
  }

  private findPad(): number {
    for (const t of ["[PAD]", "<pad>", "<|pad|>"]) {
      const id = this.tokenizer.token_to_id(t);
      if (id !== undefined) return id;
    }
    return 0;
  }

  private learnLayout(): PairLayout {
    const probeA = "first";
    const probeB = "second";
    const a = this.tokenizer.encode(probeA, { add_special_tokens: false }).ids;
    const b = this.tokenizer.encode(probeB, { add_special_tokens: false }).ids;
    const full = this.tokenizer.encode(probeA, { text_pair: probeB, return_token_type_ids: true });
    const types = full.token_type_ids ?? full.ids.map(() => 0);
    const at = indexOf(full.ids, a, 0);
    const bt = at < 0 ? -1 : indexOf(full.ids, b, at + a.length);
    if (at < 0 || bt < 0) throw new Error("cannot find how the tokenizer joins a pair of texts");
    const slice = (xs: number[], from: number, to: number) => Int32Array.from(xs.slice(from, to));
    const layout = {
      prefix: slice(full.ids, 0, at),
      middle: slice(full.ids, at + a.length, bt),
      suffix: slice(full.ids, bt + b.length, full.ids.length),
      prefixTypes: slice(types, 0, at),
      middleTypes: slice(types, at + a.length, bt),
      suffixTypes: slice(types, bt + b.length, full.ids.length),
      typeA: types[at] ?? 0,
      typeB: types[bt] ?? 0,
      specials: 0,
    };
    layout.specials = layout.prefix.length + layout.middle.length + layout.suffix.length;
    return layout;
  }

  /**
   * Byte-level BPE marks a word's leading space inside the token ("Ġword"), so a part tokenized on its
   * own must start with a space to match the joined text; WordPiece and SentencePiece ignore it either way.
   */
  private learnJoiner(): string {
    const ids = (t: string) => this.tokenizer.encode(t, { add_special_tokens: false }).ids;
    const joined = ids("first second");
    const head = ids("first");
    return equal(joined, [...head, ...ids("second")]) ? "" : " ";
  }

  /** Token ids of a text without special tokens (cached for short texts). */
  encode(text: string): Int32Array {
    if (text.length > CACHE_TEXT_CHARS) return this.encodeHead(text);
    let ids = this.cache.get(text);
    if (!ids) {
      ids = Int32Array.from(this.tokenizer.encode(text, { add_special_tokens: false }).ids);
      // A FIFO bound keeps memory flat under a stream of unique states; hot texts come back quickly.
      if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(text, ids);
    }
    return ids;
  }

  /**
   * Ids of a long text, of which at most maxTokens can ever be read: the text is first cut at a
   * whitespace near HEAD_CHARS (pre-tokenizers split there, so the head's tokens are the text's first
   * tokens); if the head has too few tokens the whole text is tokenized, so the count stays exact.
   */
  private encodeHead(text: string): Int32Array {
    const cut = text.lastIndexOf(" ", HEAD_CHARS);
    if (cut > 0) {
      const head = this.encode(text.slice(0, cut));
      if (head.length >= this.maxTokens) return head;
    }
    return Int32Array.from(this.tokenizer.encode(text, { add_special_tokens: false }).ids);
  }

  /**
   * Ids of the hypothesis parts, each tokenized on its own so it can be cached. Part 0 is the question;
   * an empty part stays in its place as no ids, so the parts keep their roles in pair().
   */
  hypothesis(parts: string[]): Int32Array[] {
    let first = true;
    return parts.map((p) => {
      if (p.length === 0) return EMPTY;
      const ids = this.encode(first ? p : this.joiner + p);
      first = false;
      return ids;
    });
  }

  /**
   * Fits a pair into maxTokens, special tokens included. The hypothesis is kept whole when it fits;
   * otherwise the option (or yes, then no) text wins over the question (part 0), each cut at its end.
   * The state gets what is left and is cut at its end.
   */
  pair(state: Int32Array, hypothesis: Int32Array[]): PairIds {
    let left = Math.max(0, this.maxTokens - this.layout.specials);
    const kept: Int32Array[] = hypothesis.map(() => EMPTY);
    for (const i of [...hypothesis.keys()].slice(1).concat(hypothesis.length > 0 ? [0] : [])) {
      kept[i] = hypothesis[i].subarray(0, Math.min(hypothesis[i].length, left));
      left -= kept[i].length;
    }
    const s = state.length > left ? state.subarray(0, left) : state;
    const parts = kept.filter((k) => k.length > 0);
    const length = this.layout.specials + s.length + parts.reduce((n, k) => n + k.length, 0);
    return { state: s.length ? s : EMPTY, hypothesis: parts, length };
  }

  /** Writes a pair's ids and token types into row buffers (padding is the caller's). */
  write(p: PairIds, ids: Int32Array, types: Int32Array, at: number): void {
    const L = this.layout;
    let i = at;
    const put = (xs: Int32Array, type: number | Int32Array) => {
      ids.set(xs, i);
      if (typeof type === "number") types.fill(type, i, i + xs.length);
      else types.set(type, i);
      i += xs.length;
    };
    put(L.prefix, L.prefixTypes);
    put(p.state, L.typeA);
    put(L.middle, L.middleTypes);
    for (const h of p.hypothesis) put(h, L.typeB);
    put(L.suffix, L.suffixTypes);
  }
}
