/**
 * The one internal question shape. Both wire APIs (/v1/systemone, /v1/decide) parse into it;
 * the engine and the answer math only ever see this.
 */
export type QuestionKind = "noul" | "choice" | "score";

export interface Option {
  /** Option key (choice) or level index as a string "0".."n-1" (score). */
  key: string;
  /** Description text, or null when the caller gave none. */
  description: string | null;
  /** score levels: the level exactly as the request sent it (string, object or array), echoed in `legend`. */
  sent?: unknown;
}

export interface Question {
  /** The caller's key for this question; answers return under it. */
  key: string;
  kind: QuestionKind;
  /** The question text (instructions rendered to text), or null when none was given. */
  text: string | null;
  /** choice: the options; score: the levels in order; noul: empty. */
  options: Option[];
  /** noul only: what yes and no mean, when given. */
  yes: string | null;
  no: string | null;
}

/** A decision request after parsing: the state rendered to text and the questions in request order. */
export interface DecisionRequest {
  model: string;
  state: string;
  questions: Question[];
}
