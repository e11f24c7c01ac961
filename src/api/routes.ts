import { RawReply, type Route } from "../http/server.js";
import { answer, type EngineHandle, type FlowDeps } from "./flow.js";
import type { CachedAnswer } from "./answer-cache.js";
import type { CalibrationRecord } from "../accounts/store.js";
import { fitCalibration, parseCalibrationRequest, type FittedCalibration } from "../calibration/fit.js";
import { calibrationFor } from "../calibration/use.js";
import type { Engine } from "../engine/engine.js";
import { ApiError } from "../http/errors.js";
import { decideAnswer, parseDecide, type DecideResponse } from "./decide.js";
import { listModels } from "./models.js";
import { OPENAPI_JSON } from "./openapi.js";
import { PLAYGROUND_CSP, PLAYGROUND_HTML } from "./playground.js";
import { parseSystemOne, systemOneAnswer, type SystemOneResponse } from "./systemone.js";

/** On every answer of both APIs: "true" when a question read only the head of the state (it did not fit a pair's tokens). */
export { STATE_TRUNCATED_HEADER } from "./headers.js";

/** The answer to cache: the body and what its headers say. */
function toCache(body: object, model: string, stateCut: boolean, modelHash: string, calibration: string): Omit<CachedAnswer, "bodyHash"> {
  return { body: body as Record<string, unknown>, model, stateTruncated: String(stateCut), modelHash, calibration };
}

/** The engine, or 503 while it cannot answer (as for a request). */
function readyEngine(deps: FlowDeps): Engine {
  if (deps.engine.state !== "ready") {
    throw new ApiError(503, deps.engine.state === "loading" ? "model_loading" : "model_failed", { headers: { "retry-after": deps.engine.state === "loading" ? "5" : "30" } });
  }
  return deps.engine.engine;
}

/** A stored calibration as listed and returned: everything it holds but its key. */
const calibrationView = (rec: CalibrationRecord): FittedCalibration => JSON.parse(rec.body) as FittedCalibration;

/**
 * Always 200 (a load balancer's check sees the process answer); the body says whether it can serve:
 * the model's state and, with shared state, each dependency ("down" means requests get 503 now).
 */
function health(deps: FlowDeps): { status: "ok" | "degraded"; model: EngineHandle["state"]; dependencies?: Record<string, "up" | "down"> } {
  const shared = deps.dependencies ?? [];
  if (shared.length === 0) return { status: "ok", model: deps.engine.state };
  return {
    status: shared.every((d) => d.up) ? "ok" : "degraded",
    model: deps.engine.state,
    dependencies: Object.fromEntries(shared.map((d) => [d.name, d.up ? "up" : "down"])),
  };
}

/** Every endpoint: both APIs differ only in their parser and serializer around the shared flow. */
export const ROUTES: Record<string, Route[]> = {
  "/": [
    {
      method: "GET",
      auth: false,
      handler: async (ctx) => {
        ctx.setHeader("content-security-policy", PLAYGROUND_CSP);
        return new RawReply("text/html; charset=utf-8", PLAYGROUND_HTML);
      },
    },
  ],
  "/openapi.json": [{ method: "GET", auth: false, handler: async () => new RawReply("application/json; charset=utf-8", OPENAPI_JSON) }],
  "/healthz": [{ method: "GET", auth: false, handler: async (_ctx, deps) => health(deps) }],
  "/v1/models": [
    {
      method: "GET",
      auth: true,
      handler: async (_ctx, deps) =>
        listModels(deps.engine.engine.info, deps.engine.engine.calibration.default_min_confidence),
    },
  ],
  "/v1/systemone": [
    {
      method: "POST",
      auth: true,
      handler: async (ctx, deps) => {
        const body = await ctx.body();
        const request = parseSystemOne(body);
        return deps.cache.through(ctx, deps, "/v1/systemone", body, async () => {
          const cal = await calibrationFor(deps, ctx.key!, body);
          const done = await answer(deps, request, ctx.key!, "/v1/systemone", ctx, cal.calibration);
          const response: SystemOneResponse = {
            model: done.model,
            answers: Object.fromEntries(done.results.map((r) => [r.question.key, systemOneAnswer(r.question, r.numbers)])),
            usage: { input_tokens: done.inputTokens, output_tokens: 0 },
          };
          return toCache(response, done.model, done.stateCut, deps.engine.engine.info.hash, cal.label);
        });
      },
    },
  ],
  "/v1/decide": [
    {
      method: "POST",
      auth: true,
      handler: async (ctx, deps) => {
        const body = await ctx.body();
        const request = parseDecide(body);
        return deps.cache.through(ctx, deps, "/v1/decide", body, async () => {
          const cal = await calibrationFor(deps, ctx.key!, body);
          const done = await answer(deps, request, ctx.key!, "/v1/decide", ctx, cal.calibration);
          const response: DecideResponse = {
            id: ctx.requestId,
            model: done.model,
            model_hash: deps.engine.engine.info.hash,
            calibration: cal.label,
            answers: Object.fromEntries(
              done.results.map((r) => [
                r.question.key,
                decideAnswer(r.question, r.numbers, request.questionMinConfidence.get(r.question.key) ?? request.minConfidence ?? cal.minConfidence(r.question.kind), r.stateCut),
              ]),
            ),
            usage: { input_tokens: done.inputTokens, output_tokens: 0 },
          };
          return toCache(response, done.model, done.stateCut, deps.engine.engine.info.hash, cal.label);
        });
      },
    },
  ],
  "/v1/calibrations": [
    {
      method: "POST",
      auth: true,
      handler: async (ctx, deps) => {
        const req = parseCalibrationRequest(await ctx.body());
        const engine = readyEngine(deps);
        const key = ctx.key!;
        const release = deps.admission.admit(key.id, req.examples.reduce((n, e) => n + Math.max(1, e.question.options.length), 0));
        try {
          const { fitted, svg } = await fitCalibration(engine, req, async (state, q) => {
            const raw = await engine.run(engine.plan(state, [q]), { lane: key.id, signal: ctx.signal });
            return raw[0];
          });
          await deps.store.saveCalibration({ keyId: key.id, name: fitted.name, createdAt: fitted.created_at, body: JSON.stringify(fitted) });
          return { ...fitted, reliability_svg: svg };
        } finally {
          release();
        }
      },
    },
    {
      method: "GET",
      auth: true,
      handler: async (ctx, deps) => ({ calibrations: (await deps.store.listCalibrations(ctx.key!.id)).map(calibrationView) }),
    },
  ],
};
