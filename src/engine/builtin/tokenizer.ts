import { readFileSync } from "node:fs";
import { join } from "node:path";
import { encoderDir } from "./encoder-files.js";

/**
 * Sentencepiece-style unigram tokenizer giving exactly the ids of the Tokenizer inside
 * @energetic-ai/embeddings (which that package does not export). We reimplement it so planning can
 * count tokens synchronously in the main thread, and faster: the package's trie search copies the
 * rest of the input at every position (quadratic), and cutting a state at 256 tokens must not cost
 * a tokenization of the whole 64 KiB body.
 *
 * Quirks of the reference kept on purpose, since the model was only ever fed its ids:
 * - a null score in vocab.json (pieces containing ":") counts as 0;
 * - a later duplicate piece overrides an earlier one;
 * - Viterbi updates a position when its best is exactly 0 or the new score is >= (ties: later wins);
 * - a position with no piece starting there and no single-char piece becomes id 0, and runs of id 0
 *   collapse to one.
 */

const SEP = "\u2581";
const SPACE = 0x20;
const isSep = (code: number): boolean => code === 0x2581 || code === SPACE;
const RESERVED = 6;
const UNK = 0;

interface TrieNode {
  next: Map<string, TrieNode>;
  /** Vocabulary id when a piece ends here, else -1. */
  id: number;
  score: number;
}

export type Vocabulary = Array<[string, number | null]>;

export interface Encoded {
  ids: number[];
  /** True when the text had more tokens than the limit and ids is its first `limit` tokens. */
  cut: boolean;
}

export class Tokenizer {
  private readonly root: TrieNode = { next: new Map(), id: -1, score: 0 };
  /** Piece lengths in UTF-16 units: the reference steps back by string length, not code points. */
  private readonly pieceLen: number[];

  constructor(vocab: Vocabulary) {
    this.pieceLen = vocab.map(([piece]) => piece.length);
    for (let i = RESERVED; i < vocab.length; i++) {
      const [piece, score] = vocab[i];
      let node = this.root;
      for (const ch of piece) {
        let child = node.next.get(ch);
        if (!child) {
          child = { next: new Map(), id: -1, score: 0 };
          node.next.set(ch, child);
        }
        node = child;
      }
      node.id = i;
      node.score = score ?? 0;
    }
  }

  /** All token ids of a text. */
  encode(text: string): number[] {
    return this.encodeHead(text, Infinity).ids;
  }

  /**
   * The first `limit` tokens of the text, identical to the first `limit` ids of encode(text).
   * No piece has the word separator past its first symbol, so every separator is a boundary that
   * every segmentation passes through; the forward pass up to it never looks further, so encoding a
   * prefix ending just before a separator gives exactly the leading ids of the whole text. We grow
   * such a prefix until it holds more than `limit` tokens.
   */
  encodeHead(text: string, limit: number): Encoded {
    const normalized = text.normalize("NFKC");
    if (normalized.length === 0) return { ids: [], cut: false };
    // The reference encodes SEP + text with spaces replaced by SEP; we map spaces while splitting
    // (a replaceAll over a 64 KiB state costs more than the whole head tokenization).
    const source = SEP + normalized;
    // Code points are split off lazily: a 64 KiB state cut at 256 tokens should cost its head only.
    const symbols: string[] = [];
    let offset = 0;
    const more = (count: number): void => {
      while (symbols.length < count && offset < source.length) {
        const cp = source.codePointAt(offset) as number;
        const len = cp > 0xffff ? 2 : 1;
        symbols.push(cp === SPACE ? SEP : source.slice(offset, offset + len));
        offset += len;
      }
    };
    const done = (): boolean => offset >= source.length;
    let end = Number.isFinite(limit) ? Math.max(64, limit * 4) : Infinity;
    for (;;) {
      more(end);
      // Extend to just before the next separator (or the end of the text).
      while (!done() && !isSep(source.charCodeAt(offset))) more(symbols.length + 1);
      end = symbols.length;
      const ids = this.viterbi(symbols, end);
      if (ids.length > limit) return { ids: ids.slice(0, limit), cut: true };
      if (done()) return { ids, cut: false };
      end *= 2;
    }
  }

  private viterbi(symbols: string[], n: number): number[] {
    const best = new Float64Array(n + 1);
    const words = new Int32Array(n + 1);
    // Pushing from each start in increasing order updates every end position in the same order
    // as the reference's pull over (end, start ascending), so ties resolve identically.
    for (let i = 0; i < n; i++) {
      const base = best[i];
      let node = this.root.next.get(symbols[i]);
      let matched = false;
      for (let j = i; node !== undefined && j < n; ) {
        j++;
        if (node.id >= 0) {
          matched = true;
          const score = node.score + base;
          if (best[j] === 0 || score >= best[j]) {
            best[j] = score;
            words[j] = node.id;
          }
        }
        node = j < n ? node.next.get(symbols[j]) : undefined;
      }
      if (!matched) {
        const score = base;
        if (best[i + 1] === 0 || score >= best[i + 1]) {
          best[i + 1] = score;
          words[i + 1] = UNK;
        }
      }
    }
    const reversed: number[] = [];
    for (let at = n; at > 0; at -= this.pieceLen[words[at]]) reversed.push(words[at]);
    const ids: number[] = [];
    for (let k = reversed.length - 1; k >= 0; k--) {
      const id = reversed[k];
      if (id === UNK && ids.length > 0 && ids[ids.length - 1] === UNK) continue;
      ids.push(id);
    }
    return ids;
  }
}

/**
 * Path of the vocabulary: the model package's vocab.json, copied into models/builtin/encoder/ beside
 * the encoder graph (scripts/build-encoder-onnx.py), so that serving does not need the package.
 */
export function vocabPath(): string {
  return join(encoderDir(), "vocab.json");
}

let shared: Tokenizer | null = null;

/** The tokenizer of the built-in model, built once per thread. */
export function builtinTokenizer(): Tokenizer {
  if (!shared) shared = new Tokenizer(JSON.parse(readFileSync(vocabPath(), "utf8")) as Vocabulary);
  return shared;
}
