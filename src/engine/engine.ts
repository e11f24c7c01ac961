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
  /** Whether a pair of this question read only the head of the state (the rest did not fit its tokens). */
  stateCut: boolean;
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
  /** Backend id, e.g. "svc-decider-e5s". */
  backend: string;
  /** Human description for GET /v1/models. */
  description: string;
  /** Languages the model is meant for (ISO 639-1). */
  languages: string[];
  /** Maximum tokens read per (state + question, option) pair. */
  maxPairTokens: number;
  /** Identity of the files that answer (weights, tokenizer, configuration, calibration): see identity.ts. Empty until loaded. */
  hash: string;
}

export interface Engine {
  readonly info: ModelInfo;
  readonly calibration: Calibration;
  /** Load weights (in workers). Resolves when the engine can run; rejects when it cannot be loaded. */
  load(): Promise<void>;
  /** Build the pairs of a request and count their tokens, without running the model. Sync: planNow(planSteps(...)). */
  plan(state: string, questions: Question[]): Plan;
  /** The same plan in steps of a bounded number of pairs (tokenizing 12,000 new options of ~20 tokens takes ~0.4 s on 2 cores): see planInTurns(). */
  planSteps(state: string, questions: Question[]): PlanSteps;
  /**
   * Run the model on a plan. Never blocks the event loop for long. Work is served in turns by
   * `lane` (the caller's key), so one lane's backlog does not hold up another's; when `signal`
   * aborts, the plan's queued work is dropped and the promise rejects with CancelledError.
   */
  run(plan: Plan, opts?: RunOptions): Promise<RawScores>;
  /** Stop workers and free resources. */
  close(): Promise<void>;
}

/** A plan built step by step: the generator yields between slices of questions and returns the plan. */
export type PlanSteps = Generator<void, Plan, void>;

/** Pairs planned per step (a few ms of tokenizing). */
export const PLAN_PAIRS_PER_STEP = 512;

/** All steps at once. */
export function planNow(steps: PlanSteps): Plan {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** One step per `turn()`. A plan of one step (most requests) is returned as it is, not as a promise: no wait at all. */
export function planInTurns(steps: PlanSteps, turn: () => Promise<void>): Plan | Promise<Plan> {
  const first = steps.next();
  if (first.done) return first.value;
  return (async () => {
    for (;;) {
      await turn();
      const r = steps.next();
      if (r.done) return r.value;
    }
  })();
}

/** Who a run is for and when to stop it. */
export interface RunOptions {
  /** Work of one lane waits behind its own lane's work, never behind another lane's backlog. */
  lane?: string;
  /** Aborting drops what is still queued for this run. */
  signal?: AbortSignal;
}

/** A run whose signal aborted: its remaining work was dropped. */
export class CancelledError extends Error {
  constructor() {
    super("the run was cancelled");
  }
}

/** Throws CancelledError when the signal has aborted already (its abort event will not fire again). */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CancelledError();
}

/** Resolves with `work`, or rejects with CancelledError as soon as `signal` aborts (work's own outcome is then ignored). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(new CancelledError());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new CancelledError());
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** Thrown by plan/run while the engine cannot answer for now (e.g. restarting a crashed worker): the API answers 503. */
export class EngineUnavailableError extends Error {}
