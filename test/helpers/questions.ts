import type { Question } from "../../src/questions/question.js";

/** An internal choice question, as the parsers make it: options as [key, description or null]. */
export const choice = (key: string, text: string | null, options: [string, string | null][]): Question => ({
  key,
  kind: "choice",
  text,
  options: options.map(([k, d]) => ({ key: k, description: d })),
  yes: null,
  no: null,
});
