import { createHash } from "node:crypto";
import type { Ctx } from "../http/server.js";
import { ApiError } from "../http/errors.js";
import type { FlowDeps } from "./flow.js";
import { CALIBRATION_HEADER, MODEL_HASH_HEADER, STATE_TRUNCATED_HEADER } from "./headers.js";

/** Marks an answer: `hit` when it was replayed from the cache (billed 0 tokens), `miss` when the model ran. */
export const CACHE_HEADER = "x-svc-cache";
export const IDEMPOTENCY_HEADER = "idempotency-key";
const MAX_IDEMPOTENCY_KEY = 255;
/** An Idempotency-Key's answer is kept this long whatever the window of identical requests (as payment APIs do). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

/** What a replay needs: the answer's body and headers, which model answered, and the body it answered. */
export interface CachedAnswer {
  body: Record<string, unknown>;
  model: string;
  stateTruncated: string;
  modelHash: string;
  /** Which calibration produced the numbers (`default` or `name@hash`). */
  calibration: string;
  /** sha256 of the request body: an Idempotency-Key reused with another body is refused. */
  bodyHash: string;
}

/** A store shared by instances (Redis), for answers one instance computed and another replays. */
export interface SharedAnswers {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
}

export interface AnswerCacheOptions {
  /** How long an answer is replayed, ms; 0 turns the cache off (an Idempotency-Key still works). */
  windowMs: number;
  /** Answers kept in this process's memory at most (least recently used go first). */
  entries: number;
  shared: SharedAnswers | null;
}

/**
 * Answers kept for a window (an Idempotency-Key's for 24 hours) so that a client that times out and retries,
 * or retries with the same Idempotency-Key, gets exactly the same numbers and is billed once: the replay is recorded in the ledger
 * as cached with 0 tokens. Keyed by API key, endpoint and the request body (or the Idempotency-Key);
 * identical requests in flight at the same time run the model once. In memory, bounded; in Redis as well
 * when instances share state, so a retry that lands on another instance is a replay too.
 */
export class AnswerCache {
  private readonly memory = new Map<string, { until: number; value: CachedAnswer }>();
  private readonly running = new Map<string, Promise<CachedAnswer>>();

  constructor(private readonly opts: AnswerCacheOptions) {}

  /** Answers the request through the cache: `compute` runs the model and bills it; a replay bills 0 tokens. */
  async through(ctx: Ctx, deps: FlowDeps, endpoint: string, body: unknown, compute: () => Promise<Omit<CachedAnswer, "bodyHash">>): Promise<unknown> {
    const keyId = ctx.key!.id;
    const idempotency = header(ctx, IDEMPOTENCY_HEADER);
    if (idempotency !== null && (idempotency === "" || idempotency.length > MAX_IDEMPOTENCY_KEY)) {
      throw new ApiError(422, "idempotency_key_invalid", { params: { max: MAX_IDEMPOTENCY_KEY } });
    }
    if (idempotency === null && this.opts.windowMs <= 0) return this.send(ctx, { ...(await compute()), bodyHash: "" }, "miss");
    const bodyHash = createHash("sha256").update(endpoint).update("\0").update(JSON.stringify(body)).digest("hex");
    const name =
      idempotency !== null
        ? `idem:${createHash("sha256").update(`${keyId}\0${endpoint}\0${idempotency}`).digest("hex")}`
        : `same:${createHash("sha256").update(`${keyId}\0`).update(bodyHash).digest("hex")}`;
    const known = (await this.get(name)) ?? (await this.running.get(name)?.catch(() => null)) ?? null;
    if (known) return this.replay(ctx, deps, endpoint, known, bodyHash, idempotency !== null);
    const run = compute().then((v) => ({ ...v, bodyHash }));
    this.running.set(name, run);
    try {
      const value = await run;
      await this.set(name, value, idempotency !== null ? IDEMPOTENCY_TTL_MS : this.opts.windowMs);
      return this.send(ctx, value, "miss");
    } finally {
      this.running.delete(name);
    }
  }

  private async replay(ctx: Ctx, deps: FlowDeps, endpoint: string, value: CachedAnswer, bodyHash: string, idempotent: boolean): Promise<unknown> {
    if (idempotent && value.bodyHash !== bodyHash) throw new ApiError(422, "idempotency_key_reused");
    await deps.store.recordUsage({ keyId: ctx.key!.id, requestId: ctx.requestId, endpoint, model: value.model, inputTokens: 0, at: Date.now(), cached: true });
    return this.send(ctx, value, "hit");
  }

  private send(ctx: Ctx, value: CachedAnswer, how: "hit" | "miss"): unknown {
    ctx.setHeader(STATE_TRUNCATED_HEADER, value.stateTruncated);
    ctx.setHeader(MODEL_HASH_HEADER, value.modelHash);
    ctx.setHeader(CALIBRATION_HEADER, value.calibration);
    ctx.setHeader(CACHE_HEADER, how);
    // /v1/decide's body carries the request id: a replay answers with its own.
    return "id" in value.body ? { ...value.body, id: ctx.requestId } : value.body;
  }

  private async get(name: string): Promise<CachedAnswer | null> {
    const hit = this.memory.get(name);
    if (hit && Date.now() < hit.until) {
      this.memory.delete(name);
      this.memory.set(name, hit);
      return hit.value;
    }
    if (hit) this.memory.delete(name);
    if (!this.opts.shared) return null;
    const text = await this.opts.shared.get(name).catch(() => null);
    return text === null ? null : (JSON.parse(text) as CachedAnswer);
  }

  private async set(name: string, value: CachedAnswer, ttlMs: number): Promise<void> {
    const ttl = Math.max(ttlMs, 1);
    if (this.opts.entries > 0) {
      this.memory.set(name, { until: Date.now() + ttl, value });
      while (this.memory.size > this.opts.entries) this.memory.delete(this.memory.keys().next().value as string);
    }
    // Best effort: an answer that could not be shared is still the right answer for this request.
    await this.opts.shared?.set(name, JSON.stringify(value), ttl).catch(() => undefined);
  }
}

function header(ctx: Ctx, name: string): string | null {
  const v = ctx.req.headers[name];
  return v === undefined ? null : Array.isArray(v) ? v.join(",") : v;
}
