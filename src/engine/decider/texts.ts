import type { Question } from "../../questions/question.js";

/**
 * The texts the decision model reads for a question: the question text, read once, and one short segment per
 * option (a choice option, a score level, a yes or a no side). The same rules as scripts/train/texts.py, which
 * built the training data: a key reads with its underscores as spaces, a description after a colon.
 */
export interface QuestionTexts {
  question: string;
  segments: string[];
}

const keyText = (key: string): string => key.replace(/_/g, " ").trim();

function optionText(key: string, description: string | null): string {
  const d = (description ?? "").trim();
  return d ? `${keyText(key)}: ${d}` : keyText(key);
}

export function questionTexts(q: Question): QuestionTexts {
  const question = (q.text ?? "").trim();
  if (q.kind === "noul") {
    const yes = (q.yes ?? "").trim();
    const no = (q.no ?? "").trim();
    const described = yes !== "" || no !== "";
    return { question, segments: described ? [yes ? `yes: ${yes}` : "yes", no ? `no: ${no}` : "no"] : ["yes", "no"] };
  }
  if (q.kind === "choice") return { question, segments: q.options.map((o) => optionText(o.key, o.description)) };
  return { question, segments: q.options.map((o) => (o.description ?? "").trim() || o.key) };
}
