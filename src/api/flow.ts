import type { Admission } from "../accounts/admission.js";
import type { Dependency } from "../accounts/dependency.js";
import type { KeyRecord } from "../accounts/store.js";
import type { LimitCounters } from "../accounts/limits.js";
import type { AccountStore } from "../accounts/store.js";
import { answerNumbers, type AnswerNumbers } from "../engine/answer.js";
import { CancelledError, EngineUnavailableError, planInTurns, type Calibration, type Engine, type Plan, type RawScores, type RunOptions } from "../engine/engine.js";
import { ApiError } from "../http/errors.js";
import { ownTurn } from "../http/turns.js";
import type { DecisionRequest, Question } from "../questions/question.js";
import { PUBLIC_MODELS, resolveModel } from "./models.js";
import type { AnswerCache } from "./answer-cache.js";

export interface Answered {
  /** The versioned model that answered. */
  model: string;
  results: { question: Question; numbers: AnswerNumbers; stateCut: boolean }[];
  inputTokens: number;
  /** Whether any question read only the head of the state (it did not fit a pair's tokens). */
  stateCut: boolean;
}

/** The engine and whether it can run now. */
export interface EngineHandle {
  engine: Engine;
  state: "loading" | "ready" | "failed";
}

export interface FlowDeps {
  engine: EngineHandle;
  /** Answers replayed to retries (billed 0 tokens): see answer-cache.ts. */
  cache: AnswerCache;
  store: AccountStore;
  limiter: LimitCounters;
  admission: Admission;
  /** Shared services (PostgreSQL, Redis) that must be up for a metered request; none for the embedded store. */
  dependencies?: readonly Dependency[];
}

/**
 * An engine that cannot answer for now (say, replacing a crashed worker) is a 503, like one still
 * loading. A cancelled run ends with the reason its signal was aborted with (a 503 at shutdown), or
 * as CancelledError when the client went away (nothing is answered then).
 */
function rethrow(err: unknown, scope?: Scope): never {
  if (err instanceof EngineUnavailableError) throw new ApiError(503, "model_loading", { headers: { "retry-after": "5" } });
  if (err instanceof CancelledError && scope?.signal.reason instanceof ApiError) throw scope.signal.reason;
  throw err;
}

/** A request as the flow sees it: its id, and whether it is still wanted. */
export interface Scope {
  readonly requestId: string;
  /** True once the client went away or shutdown stopped the request; reading it costs nothing. */
  readonly aborted: boolean;
  /** Aborts likewise (its reason: the error to answer, at shutdown). Made when first read: an AbortSignal costs microseconds. */
  readonly signal: AbortSignal;
  /** Written here for the request log and metrics: ms spent in the model, input tokens billed. */
  modelMs: number | null;
  billedTokens: number;
}

/** Run options whose signal is made only if the engine reads it (a no-op engine does not). */
class LazySignal implements RunOptions {
  constructor(
    readonly lane: string,
    private readonly scope: Scope,
  ) {}

  get signal(): AbortSignal {
    return this.scope.signal;
  }
}

/** A request refused by a limit after admission does not count towards the minute and day windows; the refusal is rethrown. */
async function refundOn(deps: FlowDeps, key: KeyRecord, err: unknown): Promise<never> {
  if (err instanceof ApiError && (err.status === 429 || err.status === 413 || err.status === 503)) {
    // Best effort: a store that cannot be reached answers with the refusal all the same.
    await Promise.resolve(deps.limiter.refund(key)).catch(() => undefined);
  }
  throw err;
}

/** Pairs the model reads for a request: one per option or level, one per noul question. */
function pairCount(req: DecisionRequest): number {
  let pairs = 0;
  for (const q of req.questions) pairs += q.kind === "noul" ? 1 : q.options.length;
  return pairs;
}

/**
 * The part both APIs share after their own parsing: model resolution, tokens and quota, the engine,
 * the answer math and the usage record. The record is committed before this returns, so a response
 * is only ever sent for a request that is billed; anything that fails before that is not billed.
 * The request holds its pairs in admission control from before planning until it ends; when
 * the scope aborts (the client went away, or shutdown), its queued work is dropped and it is not billed.
 */
export async function answer(deps: FlowDeps, req: DecisionRequest, key: KeyRecord, endpoint: string, ctx: Scope, cal?: Calibration): Promise<Answered> {
  const model = resolveModel(req.model);
  if (model === null) {
    throw new ApiError(404, "model_not_found", { params: { model: req.model, available: PUBLIC_MODELS.join(", ") } });
  }
  const { engine, state } = deps.engine;
  if (state !== "ready") {
    throw new ApiError(503, state === "loading" ? "model_loading" : "model_failed", {
      headers: { "retry-after": state === "loading" ? "5" : "30" },
    });
  }
  let release: () => void;
  try {
    release = deps.admission.admit(key.id, pairCount(req));
  } catch (err) {
    return refundOn(deps, key, err);
  }
  try {
    return await planAndRun(deps, engine, model, req, key, endpoint, ctx, cal ?? engine.calibration);
  } finally {
    release();
  }
}

async function planAndRun(
  deps: FlowDeps,
  engine: Engine,
  model: string,
  req: DecisionRequest,
  key: KeyRecord,
  endpoint: string,
  ctx: Scope,
  cal: Calibration,
): Promise<Answered> {
  // Planning a large request tokenizes every option (~0.4 s for 12,000 new options): it is planned a
  // step per turn of the event loop, keys in turn, and stops when the client has gone.
  let plan: Plan;
  try {
    const planned = planInTurns(engine.planSteps(req.state, req.questions), async () => {
      await ownTurn(key.id);
      if (ctx.aborted) throw new CancelledError();
    });
    plan = planned instanceof Promise ? await planned : planned;
  } catch (err) {
    rethrow(err, ctx);
  }
  try {
    const reserved = deps.limiter.reserve(key, plan.inputTokens, ctx.requestId);
    if (reserved) await reserved;
  } catch (err) {
    await refundOn(deps, key, err);
  }
  let billed = false;
  try {
    let raw: RawScores;
    const t0 = performance.now();
    try {
      raw = await engine.run(plan, new LazySignal(key.id, ctx));
    } catch (err) {
      rethrow(err, ctx);
    } finally {
      ctx.modelMs = performance.now() - t0;
    }
    // Gone while the answer math was pending: still not billed.
    if (ctx.aborted) rethrow(new CancelledError(), ctx);
    const results = plan.questions.map((qp, i) => ({
      question: qp.question,
      numbers: answerNumbers(qp.question.kind, raw[i], qp.question.options.map((o) => o.key), cal),
      stateCut: qp.stateCut,
    }));
    await deps.store.recordUsage({
      keyId: key.id,
      requestId: ctx.requestId,
      endpoint,
      model,
      inputTokens: plan.inputTokens,
      at: Date.now(),
    });
    billed = true;
    ctx.billedTokens = plan.inputTokens;
    return { model, results, inputTokens: plan.inputTokens, stateCut: results.some((r) => r.stateCut) };
  } finally {
    const settled = deps.limiter.settle(key, plan.inputTokens, billed, ctx.requestId);
    if (settled) await settled;
  }
}
