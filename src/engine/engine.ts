import type { Question } from "../questions/question.js";

/**
 * Calibration of one model: data shipped beside the weights (calibration.json), never constants in code.
 * choice/score: p = softmax(raw / temperature). noul: P(true) = sigmoid(a * raw + b).
 */
export interface Calibration {
  choice: { temperature: number };
  score: { temperature: number };
  noul: { a: number; b: number };
  /** Default abstention threshold on confidence (used by /v1/decide when a request sets none). */
  default_min_confidence: number;
}

/** The pairs of one question, as the model will read them, with the tokens each pair costs. */
export interface QuestionPlan {
  question: Question;
  /** Tokens read per pair (choice: per option; score: per level; noul: one pair). */
  pairTokens: number[];
}

/** What an engine will do for one request; tokens are known before any inference runs. */
export interface Plan {
  questions: QuestionPlan[];
  /** Sum of pairTokens over all questions: what the request is billed. */
  inputTokens: number;
  /** Backend-private data needed to run the plan (token ids, texts). */
  readonly work: unknown;
}

/**
 * Raw model outputs per question, in the order of Plan.questions.
 * choice/score: one raw score per option/level (higher = fits better).
 * noul: a single raw score (higher = more likely true).
 */
export type RawScores = number[][];

export interface ModelInfo {
  /** Backend id, e.g. "builtin-use-lite". */
  backend: string;
  /** Human description for GET /v1/models. */
  description: string;
  /** Languages the model is meant for (ISO 639-1). */
  languages: string[];
  /** Maximum tokens read per (state + question, option) pair. */
  maxPairTokens: number;
}

export interface Engine {
  readonly info: ModelInfo;
  readonly calibration: Calibration;
  /** Load weights (in workers). Resolves when the engine can run; rejects when it cannot be loaded. */
  load(): Promise<void>;
  /** Build the pairs of a request and count their tokens, without running the model. Sync and cheap. */
  plan(state: string, questions: Question[]): Plan;
  /** Run the model on a plan. Never blocks the event loop for long. */
  run(plan: Plan): Promise<RawScores>;
  /** Stop workers and free resources. */
  close(): Promise<void>;
}

/** Thrown by plan/run while the engine cannot answer for now (e.g. restarting a crashed worker): the API answers 503. */
export class EngineUnavailableError extends Error {}
