import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The multilingual student: a static table that maps a sequence of the built-in tokenizer's ids
 * (the same ids, so the same token counts and cuts, as the Universal Sentence Encoder reads) to a
 * vector in the teacher's 512-d space. A sequence's vector is the mean of the table rows of its
 * features:
 * - one row per token id (the sentencepiece piece, 8k rows), for every token;
 * - one row per word, when the word is in the table's word list. A word is a run of pieces with
 *   letters or digits, started by a piece with the word separator or after punctuation, read in
 *   lower case (so "Reembolso" and "reembolso" share a row).
 * Training (scripts/train-multilingual.ts) fits the rows by least squares so that the mean for a
 * sentence in en/es/pt/fr/de lands on the teacher's embedding of its English original. Lookup and
 * mean only: microseconds per sequence, deterministic, and independent of batch or order.
 */

export interface StudentMeta {
  format: "svc-student-int8-v1";
  dim: number;
  /** Rows 0..pieces-1 are token ids; rows pieces.. are words, in the order of `words`. */
  pieces: number;
  words: string[];
  /** Free-form record of how the table was made (inputs, command, numbers). */
  about?: unknown;
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const SEP = "\u2581";

/** How ids are read as words: piece text without the separator, and whether it holds a letter or digit. */
export class PieceText {
  readonly text: string[];
  readonly startsWord: Uint8Array;
  readonly wordish: Uint8Array;

  constructor(vocab: Array<[string, number | null]>) {
    this.text = vocab.map(([p]) => p.replaceAll(SEP, "").toLowerCase());
    this.startsWord = Uint8Array.from(vocab, ([p]) => (p.startsWith(SEP) ? 1 : 0));
    this.wordish = Uint8Array.from(vocab, ([p]) => (LETTER_OR_DIGIT.test(p) ? 1 : 0));
  }

  /** Words of a sequence, in order (lower case; an unknown piece reads as U+FFFD). */
  words(ids: ArrayLike<number>): string[] {
    const out: string[] = [];
    let current = "";
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      const piece = id === 0 ? "\ufffd" : this.text[id] ?? "\ufffd";
      if (id !== 0 && this.wordish[id] === 0) {
        if (current) out.push(current);
        current = "";
        continue;
      }
      if (this.startsWord[id] === 1 && current) {
        out.push(current);
        current = "";
      }
      current += piece;
    }
    if (current) out.push(current);
    return out;
  }
}

/** Feature rows of a sequence: every token id, then the rows of its known words. */
export function featureRows(ids: ArrayLike<number>, pieces: PieceText, wordRow: Map<string, number>, out: number[] = []): number[] {
  out.length = 0;
  for (let i = 0; i < ids.length; i++) out.push(ids[i]);
  for (const w of pieces.words(ids)) {
    const row = wordRow.get(w);
    if (row !== undefined) out.push(row);
  }
  return out;
}

/** The int8 table with a float scale per row, as written by the training script. */
export class Student {
  readonly dim: number;
  readonly rows: number;
  private readonly scales: Float32Array;
  private readonly values: Int8Array;
  private readonly wordRow: Map<string, number>;
  private readonly scratch: number[] = [];

  constructor(
    readonly meta: StudentMeta,
    table: Uint8Array,
    private readonly pieces: PieceText,
  ) {
    this.dim = meta.dim;
    this.rows = meta.pieces + meta.words.length;
    const scaleBytes = this.rows * 4;
    if (table.byteLength !== scaleBytes + this.rows * this.dim) {
      throw new Error(`student table has ${table.byteLength} bytes, expected ${scaleBytes + this.rows * this.dim}`);
    }
    // Copies: the file buffer may not be 4-byte aligned.
    this.scales = new Float32Array(table.slice(0, scaleBytes).buffer);
    this.values = new Int8Array(table.buffer, table.byteOffset + scaleBytes, this.rows * this.dim);
    this.wordRow = new Map(meta.words.map((w, i) => [w, meta.pieces + i]));
  }

  /** Loads student.json and student.bin from a folder. */
  static load(dir: string, vocab: Array<[string, number | null]>): Student {
    const meta = JSON.parse(readFileSync(join(dir, "student.json"), "utf8")) as StudentMeta;
    if (meta.format !== "svc-student-int8-v1") throw new Error(`unknown student format ${String(meta.format)}`);
    const bin = readFileSync(join(dir, "student.bin"));
    return new Student(meta, new Uint8Array(bin.buffer, bin.byteOffset, bin.byteLength), new PieceText(vocab));
  }

  /** Mean of the feature rows of a sequence, into `out` (zeros for an empty sequence). */
  embed(ids: ArrayLike<number>, out: Float32Array = new Float32Array(this.dim)): Float32Array {
    out.fill(0);
    const rows = featureRows(ids, this.pieces, this.wordRow, this.scratch);
    if (rows.length === 0) return out;
    const d = this.dim;
    for (const r of rows) {
      const s = this.scales[r] / rows.length;
      const base = r * d;
      for (let k = 0; k < d; k++) out[k] += s * this.values[base + k];
    }
    return out;
  }
}
