import type { Calibration } from "../engine/engine.js";
import { ApiError } from "../http/errors.js";
import type { KeyRecord } from "../accounts/store.js";
import type { FlowDeps } from "../api/flow.js";
import type { QuestionKind } from "../questions/question.js";
import type { FittedCalibration } from "./fit.js";

/** The calibration a request answers with: the model's own, or one its key fitted. */
export interface InUse {
  calibration: Calibration;
  /** decide: the default threshold of a question of each type. */
  minConfidence: (kind: QuestionKind) => number;
  /** What answers say they used: `default`, or `name@hash`. */
  label: string;
}

/**
 * The request's `calibration` field (both APIs): absent, the model's own calibration; a name, the key's calibration
 * of that name (422 when the key has none, or when it was fitted on other model files than those answering now).
 */
export async function calibrationFor(deps: FlowDeps, key: KeyRecord, body: unknown): Promise<InUse> {
  const engine = deps.engine.engine;
  const name = body !== null && typeof body === "object" ? (body as Record<string, unknown>).calibration : undefined;
  if (name === undefined || name === null) {
    return { calibration: engine.calibration, minConfidence: () => engine.calibration.default_min_confidence, label: "default" };
  }
  if (typeof name !== "string" || name === "") throw ApiError.validation([{ loc: ["calibration"], code: "calibration_name", type: "value_error" }]);
  const rec = await deps.store.getCalibration(key.id, name);
  if (rec === null) throw ApiError.validation([{ loc: ["calibration"], code: "calibration_not_found", type: "value_error", params: { name } }]);
  const fitted = JSON.parse(rec.body) as FittedCalibration;
  if (engine.info.hash !== "" && fitted.model_hash !== engine.info.hash) {
    throw ApiError.validation([{ loc: ["calibration"], code: "calibration_stale", type: "value_error", params: { name, fitted: fitted.model_hash, serving: engine.info.hash } }]);
  }
  return { calibration: fitted.calibration, minConfidence: (kind) => fitted.min_confidence[kind], label: `${fitted.name}@${fitted.hash}` };
}
