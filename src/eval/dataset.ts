import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Option, Question, QuestionKind } from "../questions/question.js";
import { renderText } from "../questions/render.js";

/** One labeled line of eval/<set>/*.jsonl. */
export interface DevItem {
  id: string;
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
  const items: DevItem[] = [];
  const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort();
  for (const file of files) {
    const lines = readFileSync(join(dir, file), "utf8").split("\n");
    lines.forEach((line, i) => {
      if (line.trim() === "") return;
      try {
        items.push(checkItem(JSON.parse(line)));
      } catch (err) {
        if (!opts.skipInvalid) throw new Error(`${file}:${i + 1}: ${(err as Error).message}`);
      }
    });
  }
  return items;
}

function checkItem(value: unknown): DevItem {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("not an object");
  const v = value as Record<string, unknown>;
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

const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : renderText(v));

/** The internal question of a labeled item (its key is the item id). */
export function toQuestion(item: DevItem): Question {
  const base = { key: item.id, kind: item.type, text: textOrNull(item.instructions), yes: null, no: null };
  const c = item.criteria;
  switch (item.type) {
    case "choice": {
      let options: Option[];
      if (Array.isArray(c)) options = c.map((k) => ({ key: String(k), description: null }));
      else if (typeof c === "object" && c !== null) {
        options = Object.entries(c).map(([key, d]) => ({ key, description: textOrNull(d) }));
      } else throw new Error("choice criteria must be an object or a list");
      if (!options.some((o) => o.key === item.label)) throw new Error(`label ${String(item.label)} is not an option`);
      return { ...base, options };
    }
    case "score": {
      if (!Array.isArray(c)) throw new Error("score criteria must be a list");
      const label = item.label as number;
      if (label < 0 || label >= c.length) throw new Error(`label ${label} is not a level`);
      return { ...base, options: c.map((d, i) => ({ key: String(i), description: textOrNull(d) })) };
    }
    case "noul": {
      if (c !== null && c !== undefined && (typeof c !== "object" || Array.isArray(c))) {
        throw new Error("noul criteria must be an object or null");
      }
      const crit = (c ?? {}) as Record<string, unknown>;
      return { ...base, options: [], yes: textOrNull(crit["true"]), no: textOrNull(crit["false"]) };
    }
  }
}

/** The label as an option index (choice/score) or 1/0 (noul). */
export function labelIndex(item: DevItem, q: Question): number {
  if (item.type === "noul") return item.label === true ? 1 : 0;
  if (item.type === "score") return item.label as number;
  return q.options.findIndex((o) => o.key === item.label);
}
