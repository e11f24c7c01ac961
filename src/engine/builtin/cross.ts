/**
 * The cross-encoder's input: one token sequence per candidate of a question, made from the pieces
 * of the plan (the same pieces, cuts and bill as the bi-encoder routes):
 *
 *   state ids, SEP_ID, question ids, candidate ids
 *
 * where the candidate is an option (choice), a level (score), or a yes / no side (noul: two
 * sequences; a side the caller did not describe reads the bare words of `bare`, which are not billed).
 * scripts/tokenize-decisions.ts builds the training sequences with this same function.
 */
import type { QuestionKind } from "../../questions/question.js";

/** `</s>` of the vocabulary: never produced by the tokenizer, so it marks the border unambiguously. */
export const SEP_ID = 2;
/** Longest sequence: a pair of MAX_PAIR_TOKENS plus the separator. */
export const CROSS_MAX_TOKENS = 257;

/** Token ids of one pair after the plan's cut; noul: `option` is the yes part, `no` the no part. */
export interface PairWork {
  state: Int32Array;
  question: Int32Array;
  option: Int32Array;
  no: Int32Array;
}

/** Ids of the bare sides of a noul whose meanings were not given. */
export interface BareSides {
  yes: Int32Array;
  no: Int32Array;
}

function sequence(p: PairWork, candidate: Int32Array): Int32Array {
  const out = new Int32Array(p.state.length + 1 + p.question.length + candidate.length);
  out.set(p.state);
  out[p.state.length] = SEP_ID;
  out.set(p.question, p.state.length + 1);
  out.set(candidate, p.state.length + 1 + p.question.length);
  return out;
}

/** The sequences of one question's pairs: one per option or level; noul: [yes side, no side]. */
export function crossRows(kind: QuestionKind, pairs: PairWork[], bare: BareSides): Int32Array[] {
  if (kind !== "noul") return pairs.map((p) => sequence(p, p.option));
  const p = pairs[0];
  return [sequence(p, p.option.length > 0 ? p.option : bare.yes), sequence(p, p.no.length > 0 ? p.no : bare.no)];
}

/** Raw scores of a question from its rows' logits: choice/score one per option; noul the yes side less the no side. */
export function crossRaw(kind: QuestionKind, logits: number[]): number[] {
  return kind === "noul" ? [logits[0] - logits[1]] : logits;
}
