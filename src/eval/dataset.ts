import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseSystemOne } from "../api/systemone.js";
import { ApiError } from "../http/errors.js";
import type { Question, QuestionKind } from "../questions/question.js";

/** One labeled line of eval/<set>/*.jsonl. */
export interface DevItem {
  id: string;
  /** Items of one group fall in the same split (fit or test); a line without one is a group of its own (its id). */
  group: string;
  lang: string;
  domain: string;
  state: unknown;
  type: QuestionKind;
  instructions: unknown;
  /** choice: {key: description|null}; noul: {true?, false?} or null; score: [levels]. */
  criteria: unknown;
  /** choice: option key; noul: boolean; score: level index. */
  label: string | boolean | number;
}

const KINDS: readonly string[] = ["noul", "choice", "score"];

/** Reads every *.jsonl file of a folder (in name order). Throws on a malformed line unless told to skip it. */
export function loadDataset(dir: string, opts: { skipInvalid?: boolean } = {}): DevItem[] {
  return datasetLines(dir, opts).map((x) => x.item);
}

/** loadDataset's items, each with the file (name within the folder) and the line (from 1) it was read from. */
export function datasetLines(dir: string, opts: { skipInvalid?: boolean } = {}): { item: DevItem; file: string; line: number }[] {
  const out: { item: DevItem; file: string; line: number }[] = [];
  const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort();
  for (const file of files) {
    const lines = readFileSync(join(dir, file), "utf8").split("\n");
    lines.forEach((line, i) => {
      if (line.trim() === "") return;
      try {
        out.push({ item: checkItem(JSON.parse(line)), file, line: i + 1 });
      } catch (err) {
        if (!opts.skipInvalid) throw new Error(`${file}:${i + 1}: ${(err as Error).message}`);
      }
    });
  }
  return out;
}

function checkItem(value: unknown): DevItem {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("not an object");
  const v = value as Record<string, unknown>;
  if (v.group === undefined && typeof v.id === "string") v.group = v.id;
  for (const field of ["id", "group", "lang", "domain"]) {
    if (typeof v[field] !== "string") throw new Error(`${field} must be a string`);
  }
  if (typeof v.type !== "string" || !KINDS.includes(v.type)) throw new Error(`unknown type ${String(v.type)}`);
  const label = v.label;
  const ok =
    (v.type === "choice" && typeof label === "string") ||
    (v.type === "noul" && typeof label === "boolean") ||
    (v.type === "score" && typeof label === "number" && Number.isInteger(label));
  if (!ok) throw new Error(`label ${JSON.stringify(label)} does not fit type ${v.type}`);
  const item = v as unknown as DevItem;
  toQuestion(item);
  return item;
}

/**
 * The internal question of a labeled item (its key is the item id), read by the same parser as
 * POST /v1/systemone so that eval measures exactly what the API answers.
 */
export function toQuestion(item: DevItem): Question {
  let q: Question;
  try {
    q = parseSystemOne({
      model: "svc-latest",
      state: "",
      questions: { [item.id]: { type: item.type, instructions: item.instructions, criteria: item.criteria } },
    }).questions[0];
  } catch (err) {
    if (err instanceof ApiError) throw new Error(err.toBody("en").error.message as string);
    throw err;
  }
  if (item.type !== "noul" && !q.options.some((o, i) => (item.type === "choice" ? o.key === item.label : i === item.label))) {
    throw new Error(`label ${String(item.label)} is not an option`);
  }
  return q;
}

/** The label as an option index (choice/score) or 1/0 (noul). */
export function labelIndex(item: DevItem, q: Question): number {
  if (item.type === "noul") return item.label === true ? 1 : 0;
  if (item.type === "score") return item.label as number;
  return q.options.findIndex((o) => o.key === item.label);
}

function described(text: unknown): boolean {
  return typeof text === "string" && text.trim() !== "";
}

/**
 * The item as a caller would ask it without describing its answers: a choice's option descriptions
 * and a noul's true/false meanings removed. null when it has none to remove (a score's levels are the
 * scale itself, so scores always give null).
 */
export function withoutDescriptions(item: DevItem): DevItem | null {
  const c = item.criteria;
  if (item.type === "score" || typeof c !== "object" || c === null) return null;
  const entries = Object.entries(c as Record<string, unknown>);
  if (!entries.some(([, text]) => described(text))) return null;
  return { ...item, criteria: item.type === "noul" ? null : Object.fromEntries(entries.map(([key]) => [key, null])) };
}
