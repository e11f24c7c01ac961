/**
 * A faster segmentation step for @huggingface/tokenizers' Unigram model (XLM-R's sentencepiece vocabulary), the
 * same pieces as the library's own. The library builds a lattice object per word (a node object per matching
 * piece, cloned while it searches, a generator and a new string per prefix tried): 9-13 µs per token for the
 * whole encode on 2 cores, most of a short request's planning; with this, 2.3-2.8 µs. It walks a trie of code
 * points once per start position and keeps, per end position, the best path's score and its last piece's length
 * (Viterbi), then reads the pieces back.
 *
 * Equal by construction to the library's lattice search (TokenLattice.viterbi): a node's best predecessor is the
 * first, in insertion order, of the highest-scoring nodes ending where it begins; nodes are inserted by start
 * position and, per start, by length, so keeping a candidate only when strictly better picks that same one.
 * Scores add in the same order (predecessor's path + the piece's score). A position no single-character piece
 * starts gets the unknown piece there, scored the vocabulary's least score minus 10, as the library does.
 * test/unigram.test.ts compares the two on every text of eval/ and a tenth of the written training examples
 * (all 689,837 strings of eval/ and training/, 2.67 million tokens, gave the same ids when this was written).
 */

/**
 * The trie's edges in one open-addressing hash table of typed arrays (about 8 MB for XLM-R's trimmed vocabulary
 * of 126,488 pieces and 255,856 nodes; a Map per node took 50 MB): (node, code point) -> child node.
 */
class Edges {
  private parent = new Int32Array(1 << 16).fill(-1);
  private cp = new Int32Array(1 << 16);
  private child = new Int32Array(1 << 16);
  private count = 0;

  private slot(node: number, cp: number): number {
    const mask = this.parent.length - 1;
    let h = (Math.imul(node, 0x9e3779b1) ^ Math.imul(cp, 0x85ebca77)) & mask;
    while (this.parent[h] !== -1 && (this.parent[h] !== node || this.cp[h] !== cp)) h = (h + 1) & mask;
    return h;
  }

  /** The child of node by code point cp, or -1. */
  get(node: number, cp: number): number {
    const h = this.slot(node, cp);
    return this.parent[h] === -1 ? -1 : this.child[h];
  }

  set(node: number, cp: number, child: number): void {
    if (2 * (this.count + 1) > this.parent.length) {
      const [parent, cps, children] = [this.parent, this.cp, this.child];
      this.parent = new Int32Array(2 * parent.length).fill(-1);
      this.cp = new Int32Array(2 * parent.length);
      this.child = new Int32Array(2 * parent.length);
      this.count = 0;
      for (let i = 0; i < parent.length; i++) if (parent[i] !== -1) this.set(parent[i], cps[i], children[i]);
    }
    const h = this.slot(node, cp);
    if (this.parent[h] === -1) this.count++;
    this.parent[h] = node;
    this.cp[h] = cp;
    this.child[h] = child;
  }
}

export class UnigramSegmenter {
  /** The trie of the vocabulary's pieces by code point; the root is node 0. */
  private readonly edges = new Edges();
  /** Per node, the score of the piece ending there (NaN where none does). */
  private readonly scores: Float64Array;
  private readonly unkScore: number;

  /** vocab: the tokenizer.json model's [piece, score] list; unkId: its unk_id. */
  constructor(vocab: [string, number][], unkId: number) {
    let min = Infinity;
    for (const [, s] of vocab) min = Math.min(min, s);
    this.unkScore = min - 10;
    let nodes = 1;
    const ends = new Int32Array(vocab.length);
    vocab.forEach(([piece], id) => {
      let at = 0;
      for (const ch of piece) {
        const cp = ch.codePointAt(0)!;
        const child = this.edges.get(at, cp);
        if (child === -1) {
          this.edges.set(at, cp, nodes);
          at = nodes++;
        } else at = child;
      }
      ends[id] = at;
    });
    this.scores = new Float64Array(nodes).fill(NaN);
    // A piece listed twice scores as its last entry (the library's piece-to-id map keeps the last id).
    vocab.forEach(([, s], id) => {
      this.scores[ends[id]] = id === unkId ? this.unkScore : s;
    });
  }

  /** The pieces of one normalized, pre-tokenized word, as the library's Unigram model's tokenize() returns them. */
  tokenize(word: string): string[] {
    const cps: number[] = [];
    const offsets: number[] = [];
    for (let i = 0; i < word.length; ) {
      const cp = word.codePointAt(i)!;
      offsets.push(i);
      cps.push(cp);
      i += cp > 0xffff ? 2 : 1;
    }
    const n = cps.length;
    offsets.push(word.length);
    if (n === 0) return [];
    const best = new Float64Array(n + 1);
    const last = new Int32Array(n + 1); // length in code points of the best path's last piece; 0: none yet
    for (let pos = 0; pos < n; pos++) {
      const base = best[pos];
      let single = false;
      let at = 0;
      for (let end = pos; end < n; end++) {
        at = this.edges.get(at, cps[end]);
        if (at === -1) break;
        const piece = this.scores[at];
        if (Number.isNaN(piece)) continue;
        const length = end + 1 - pos;
        if (length === 1) single = true;
        const score = base + piece;
        if (last[end + 1] === 0 || score > best[end + 1]) {
          best[end + 1] = score;
          last[end + 1] = length;
        }
      }
      if (!single) {
        const score = base + this.unkScore;
        if (last[pos + 1] === 0 || score > best[pos + 1]) {
          best[pos + 1] = score;
          last[pos + 1] = 1;
        }
      }
    }
    const pieces: string[] = [];
    for (let end = n; end > 0; end -= last[end]) pieces.push(word.slice(offsets[end - last[end]], offsets[end]));
    return pieces.reverse();
  }
}

interface UnigramJson {
  model?: { type?: string; vocab?: [string, number][]; unk_id?: number; byte_fallback?: boolean };
}

/**
 * Give a Tokenizer made from `json` this segmenter in place of its Unigram model's own (which tokenize() the
 * library's model calls per pre-tokenized word); other model types, and a Unigram model with byte fallback
 * (unknown characters as byte pieces, which this does not do), are left as they are. Returns whether it did.
 */
export function useUnigramSegmenter(tokenizer: object, json: object): boolean {
  const model = (json as UnigramJson).model;
  const inner = (tokenizer as { model?: { tokenize?: unknown } }).model;
  if (model?.type !== "Unigram" || !model.vocab || model.unk_id === undefined || model.byte_fallback) return false;
  if (typeof inner?.tokenize !== "function") return false;
  const segmenter = new UnigramSegmenter(model.vocab, model.unk_id);
  inner.tokenize = (word: string): string[] => segmenter.tokenize(word);
  return true;
}
