import { LIMITS } from "../questions/fields.js";
import { CURRENT_VERSION, PUBLIC_MODELS } from "./models.js";

/**
 * The OpenAPI 3.1 document of every endpoint, served at GET /openapi.json. The tests validate every
 * response they receive against it (test/helpers/openapi.ts), so it describes what the service does.
 */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ "application/json": { schema } });

const REQUEST_ID = {
  description: "The request id, `req_` and 24 hex digits (the first 11 are the time in ms).",
  required: true,
  schema: { type: "string", pattern: "^req_[0-9a-f]{24}$" },
};
const ID_HEADERS = {
  "x-request-id": { $ref: "#/components/headers/RequestId" },
  "x-alt-request-id": { $ref: "#/components/headers/RequestId" },
  "x-typesafe-request-id": { $ref: "#/components/headers/RequestId" },
};

const CALIBRATION_FIELD = {
  type: "string",
  description: "The name of a calibration this key fitted (POST /v1/calibrations): its temperatures and thresholds answer instead of the model's own.",
};

const ERROR_CASES: Record<string, string> = {
  "400": "The body is not UTF-8 JSON (the message gives the line and column), is compressed without its `Content-Encoding`, cannot be decompressed, or the request is not HTTP.",
  "401": "The key is missing, unknown or revoked, or `Authorization` lacks the `Bearer ` scheme.",
  "404": "Unknown model or path (GET /metrics on the API port included).",
  "405": "Wrong method; `Allow` lists the right ones.",
  "408": "The body or the headers did not arrive in time.",
  "413": "The body is over 64 KiB after decompression, or the request alone needs more input tokens than the key's whole monthly quota (`error.limit` names the quota; no Retry-After: waiting does not help).",
  "415": "A `Content-Encoding` other than zstd, gzip, x-gzip or identity.",
  "422": "A missing or invalid field (`detail` lists every problem), images, files, Box questions, multipart or non-JSON bodies.",
  "429": "A limit was passed: `error.limit` says which; `Retry-After` says when to retry.",
  "500": "A bug (never a stack trace; not billed).",
  "503": "The model is loading or failed, the server is at capacity or shutting down, or a shared store is down; `Retry-After` says when to retry.",
};

/** The error answers an endpoint can give. */
function errors(statuses: string[]): Record<string, object> {
  return Object.fromEntries(statuses.map((s) => [s, { $ref: `#/components/responses/E${s}` }]));
}

const API_ERRORS = ["400", "401", "404", "405", "408", "413", "415", "422", "429", "500", "503"];
const GET_ERRORS = ["400", "401", "404", "405", "408", "429", "500", "503"];

const probabilityMap = {
  type: "object",
  description: "Probability per option key (choice) or level index as a string (score); they sum to 1.",
  additionalProperties: { type: "number", minimum: 0, maximum: 1 },
};
const confidence = { type: "number", minimum: 0, maximum: 1, description: "1 - H(p)/ln(n): 0 means no idea, 1 means certain." };
const text = {
  description: "A string, or an object or array read as text (`key: value` lines in the order sent).",
  type: ["string", "object", "array"],
};
const usage = {
  type: "object",
  required: ["input_tokens", "output_tokens"],
  additionalProperties: false,
  properties: {
    input_tokens: { type: "integer", minimum: 0, description: "Tokens read, summed over every (state + question, option) pair: what is billed." },
    output_tokens: { const: 0 },
  },
};

const SCHEMAS = {
  Error: {
    type: "object",
    required: ["error", "detail"],
    additionalProperties: false,
    properties: {
      error: {
        type: "object",
        required: ["type", "message"],
        additionalProperties: false,
        properties: {
          type: {
            enum: ["invalid_request_error", "authentication_error", "not_found_error", "timeout_error", "request_too_large", "unsupported_media_type", "rate_limit_error", "api_error", "service_unavailable_error"],
          },
          message: { type: "string", description: "In English, Spanish, Portuguese, French or German after Accept-Language; a field problem is prefixed with its dotted path." },
          limit: { enum: ["per_minute", "per_day", "monthly_quota", "key_limit", "concurrency"], description: "On 429, and on the 413 of a request larger than the whole monthly quota: the limit." },
          window: { enum: ["per_minute", "per_day", "monthly_quota"], description: "With `limit: key_limit`: which of the key's own limits." },
          problems_omitted: { type: "integer", minimum: 1, description: "Problems found past the 100 listed in `detail`." },
          line: { type: "integer", minimum: 1, description: "On a 400 for invalid JSON: where it stops being JSON." },
          column: { type: "integer", minimum: 1 },
        },
      },
      detail: {
        type: "array",
        maxItems: 101,
        items: {
          type: "object",
          required: ["loc", "msg", "type"],
          additionalProperties: false,
          properties: {
            loc: { type: "array", minItems: 1, prefixItems: [{ const: "body" }], items: { type: ["string", "integer"] } },
            msg: { type: "string" },
            type: { type: "string" },
          },
        },
      },
    },
  },
  Text: text,
  SystemOneRequest: {
    type: "object",
    required: ["model", "state", "questions"],
    properties: {
      model: { type: "string", description: `${PUBLIC_MODELS.join(", ")}, or an alias (alt-latest, jev-latest, alt-1.x.y, jev-1.x.y, alt-preview, jev-preview).` },
      state: ref("Text"),
      calibration: CALIBRATION_FIELD,
      questions: {
        type: "object",
        minProperties: 1,
        maxProperties: LIMITS.maxQuestions,
        additionalProperties: ref("SystemOneQuestion"),
      },
    },
  },
  SystemOneQuestion: {
    type: "object",
    required: ["type"],
    properties: {
      type: { enum: ["noul", "choice", "score"] },
      instructions: { description: `The question: text (at most ${LIMITS.maxInstructionChars} characters once rendered) or null.`, type: ["string", "object", "array", "null"] },
      criteria: {
        description:
          "noul: `{\"true\": text, \"false\": text}` (both optional). choice: `{key: description|null}` or a list of keys, 2 to 255 options. " +
          "score: a list of 2 to 10 levels (strings, objects or arrays; not null), or an object with keys \"0\"..\"n-1\".",
        type: ["object", "array", "null"],
      },
    },
  },
  SystemOneResponse: {
    type: "object",
    required: ["model", "answers", "usage"],
    additionalProperties: false,
    properties: {
      model: { enum: [CURRENT_VERSION, "svc-preview"], description: "The versioned model that answered (svc-preview and its aliases answer as svc-preview)." },
      answers: { type: "object", additionalProperties: ref("SystemOneAnswer") },
      usage,
    },
  },
  SystemOneAnswer: {
    oneOf: [
      {
        type: "object",
        required: ["type", "noul"],
        additionalProperties: false,
        properties: { type: { const: "noul" }, noul: { type: "number", minimum: 0, maximum: 1, description: "P(true)." } },
      },
      {
        type: "object",
        required: ["type", "choice", "probabilities", "confidence"],
        additionalProperties: false,
        properties: { type: { const: "choice" }, choice: { type: "string" }, probabilities: probabilityMap, confidence },
      },
      {
        type: "object",
        required: ["type", "score", "legend", "probabilities", "confidence"],
        additionalProperties: false,
        properties: {
          type: { const: "score" },
          score: { type: "number", minimum: 0, description: "The expected level, sum of i * p_i, as a full double." },
          legend: {
            type: "object",
            description: "Level index (as a string) to the level exactly as the request sent it.",
            additionalProperties: { type: ["string", "object", "array"] },
          },
          probabilities: probabilityMap,
          confidence,
        },
      },
    ],
  },
  DecideRequest: {
    type: "object",
    required: ["model", "state", "questions"],
    properties: {
      model: { type: "string" },
      state: ref("Text"),
      min_confidence: { type: "number", minimum: 0, maximum: 1, description: "Abstain under this confidence (default: the calibration's threshold for the question's type; without a calibration, the model's `default_min_confidence`)." },
      calibration: CALIBRATION_FIELD,
      questions: { type: "object", minProperties: 1, maxProperties: LIMITS.maxQuestions, additionalProperties: ref("DecideQuestion") },
    },
  },
  DecideQuestion: {
    type: "object",
    required: ["type", "question"],
    properties: {
      type: { enum: ["binary", "choice", "scale"] },
      question: ref("Text"),
      yes: { ...text, description: "binary: what yes means (text)." },
      no: { ...text, description: "binary: what no means (text)." },
      options: { description: "choice: `{key: description|null}` or a list of keys, 2 to 255.", type: ["object", "array"] },
      levels: { description: "scale: 2 to 10 level descriptions, in order.", type: ["array", "object"] },
      min_confidence: { type: "number", minimum: 0, maximum: 1 },
    },
  },
  DecideResponse: {
    type: "object",
    required: ["id", "model", "model_hash", "calibration", "answers", "usage"],
    additionalProperties: false,
    properties: {
      id: { type: "string", pattern: "^req_[0-9a-f]{24}$", description: "The request id." },
      model: { type: "string" },
      model_hash: ref("ModelHash"),
      calibration: { type: "string", description: "The calibration that produced the numbers: `default`, or `name@hash` of one this key fitted." },
      answers: { type: "object", additionalProperties: ref("DecideAnswer") },
      usage,
    },
  },
  DecideAnswer: {
    description:
      "When `confidence` is under `min_confidence`, `answer` (and `level`) are null and `abstained` is true. " +
      "`state_truncated` is true when the state did not fit this question's pairs and only its head was read.",
    oneOf: [
      {
        type: "object",
        required: ["type", "answer", "probability", "confidence", "abstained", "min_confidence", "state_truncated"],
        additionalProperties: false,
        properties: {
          type: { const: "binary" },
          answer: { type: ["boolean", "null"] },
          probability: { type: "number", minimum: 0, maximum: 1 },
          confidence,
          abstained: { type: "boolean" },
          min_confidence: { type: "number", minimum: 0, maximum: 1 },
          state_truncated: { type: "boolean" },
        },
      },
      {
        type: "object",
        required: ["type", "answer", "probabilities", "confidence", "abstained", "min_confidence", "state_truncated"],
        additionalProperties: false,
        properties: {
          type: { const: "choice" },
          answer: { type: ["string", "null"] },
          probabilities: probabilityMap,
          confidence,
          abstained: { type: "boolean" },
          min_confidence: { type: "number", minimum: 0, maximum: 1 },
          state_truncated: { type: "boolean" },
        },
      },
      {
        type: "object",
        required: ["type", "answer", "level", "probabilities", "confidence", "abstained", "min_confidence", "state_truncated"],
        additionalProperties: false,
        properties: {
          type: { const: "scale" },
          answer: { type: ["number", "null"], description: "The expected level, as a full double." },
          level: { type: ["integer", "null"], minimum: 0, description: "The most probable level." },
          probabilities: probabilityMap,
          confidence,
          abstained: { type: "boolean" },
          min_confidence: { type: "number", minimum: 0, maximum: 1 },
          state_truncated: { type: "boolean" },
        },
      },
    ],
  },
  CalibrationRequest: {
    type: "object",
    required: ["name", "examples"],
    properties: {
      name: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" },
      model: { type: "string", description: "The model the examples are for (default svc-latest)." },
      target_accuracy: { type: "number", exclusiveMinimum: 0, maximum: 1, description: "The accuracy the fitted min_confidence must reach on the answered fit examples, counted with one right and one wrong answer added (default 0.9)." },
      examples: {
        type: "array",
        minItems: 20,
        items: {
          type: "object",
          required: ["state", "question", "answer"],
          properties: {
            state: ref("Text"),
            question: { description: "One question in either API's shape (SystemOneQuestion or DecideQuestion).", type: "object" },
            answer: { description: "noul/binary: true or false; choice: an option key; score/scale: a level index.", type: ["boolean", "string", "integer"] },
            model: { type: "string" },
          },
        },
      },
    },
  },
  Calibration: {
    type: "object",
    required: ["name", "hash", "model", "model_hash", "target_accuracy", "examples", "calibration", "min_confidence", "target_reached", "report", "created_at"],
    properties: {
      name: { type: "string" },
      hash: { type: "string", pattern: "^[0-9a-f]{12}$" },
      model: { type: "string" },
      model_hash: ref("ModelHash"),
      target_accuracy: { type: "number" },
      examples: { type: "object", required: ["fit", "held_out"], properties: { fit: { type: "integer" }, held_out: { type: "integer" } } },
      calibration: { type: "object", description: "Temperatures per type (noul: slope a and bias b) and the overall default_min_confidence." },
      min_confidence: {
        type: "object",
        required: ["noul", "choice", "score"],
        properties: Object.fromEntries(["noul", "choice", "score"].map((k) => [k, { type: "number", minimum: 0, maximum: 1 }])),
      },
      target_reached: { type: "object", additionalProperties: { type: ["boolean", "null"] }, description: "Per type: whether some threshold reached the target on the fit examples (null: no examples of that type)." },
      report: {
        type: "object",
        required: ["before", "after"],
        properties: { before: { type: "object" }, after: { type: "object" } },
        description: "On the held-out examples, per type and `all`: n, accuracy, ece, coverage (share answered at the threshold) and answered_accuracy, with the model's own calibration (before) and the fitted one (after). A figure over no examples is null.",
      },
      created_at: { type: "string" },
      reliability_svg: { type: "string", description: "POST only: a reliability diagram (SVG) of the held-out examples, before and after." },
    },
  },
  CalibrationList: {
    type: "object",
    required: ["calibrations"],
    properties: { calibrations: { type: "array", items: ref("Calibration") } },
  },
  ModelHash: {
    type: "string",
    pattern: "^[0-9a-f]{12}$",
    description: "The identity of the model files and calibration that answer: the first 12 hex digits of a sha256 over them. Any change of weights, tokenizer, configuration or calibration changes it.",
  },
  ModelList: {
    type: "object",
    required: ["models"],
    additionalProperties: false,
    properties: {
      models: {
        type: "array",
        items: {
          type: "object",
          required: ["name", "description", "release_date", "resolves_to", "aliases", "backend", "languages", "max_tokens_per_pair", "default_min_confidence", "hash"],
          additionalProperties: false,
          properties: {
            name: { enum: [...PUBLIC_MODELS] },
            description: { type: "string" },
            release_date: { type: "string", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" },
            resolves_to: { type: "string" },
            aliases: { type: "array", items: { type: "string" } },
            backend: { type: "string" },
            languages: { type: "array", items: { type: "string" } },
            max_tokens_per_pair: { type: "integer", minimum: 1 },
            default_min_confidence: { type: "number", minimum: 0, maximum: 1 },
            hash: ref("ModelHash"),
          },
        },
      },
    },
  },
  Health: {
    type: "object",
    required: ["status", "model"],
    additionalProperties: false,
    properties: {
      status: { enum: ["ok", "degraded"], description: "degraded: a shared store is down and metered requests get 503." },
      model: { enum: ["loading", "ready", "failed"] },
      dependencies: { type: "object", additionalProperties: { enum: ["up", "down"] }, description: "With shared state only: each dependency." },
    },
  },
};

const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Any string of 1 to 255 characters naming this request. Sent again with the same body within 24 hours, the first answer is replayed " +
    "(`x-svc-cache: hit`, billed 0 tokens); sent again with a different body it is refused with 422. Without it, an identical body from " +
    "the same key within SVC_CACHE_WINDOW_MS (default 10 minutes) is replayed the same way.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

const answered = (schema: object, description: string) => ({
  description,
  headers: {
    ...ID_HEADERS,
    "x-state-truncated": {
      description: "`true` when a question read only the head of the state: the state did not fit the 256 tokens of a (state + question, option) pair and was cut at its end.",
      required: true,
      schema: { enum: ["true", "false"] },
    },
    "x-svc-cache": {
      description: "`hit` when the answer was replayed for a retry (identical request or the same Idempotency-Key; billed 0 tokens, the numbers exactly the first answer's), `miss` when the model ran.",
      required: true,
      schema: { enum: ["hit", "miss"] },
    },
    "x-calibration": {
      description: "Which calibration produced the numbers: `default` (the model's own), or `name@hash` of one this key fitted.",
      required: true,
      schema: { type: "string" },
    },
    "x-model-hash": {
      description: "The identity of the model files and calibration that produced the answer (as `hash` in GET /v1/models).",
      required: true,
      schema: { type: "string", pattern: "^[0-9a-f]{12}$" },
    },
  },
  content: json(schema),
});

export const OPENAPI = {
  openapi: "3.1.0",
  info: {
    title: "svc",
    version: CURRENT_VERSION.replace(/^svc-/, ""),
    summary: "A self-hostable decision service: typed questions about a state in, calibrated numbers out.",
    description:
      "`POST /v1/systemone` is wire-compatible with TypeSafe AI's System One API; `POST /v1/decide` is the native API with abstention. " +
      "Every response, errors included, carries the same request id in `x-request-id`, `x-alt-request-id` and `x-typesafe-request-id`.",
    license: { name: "Apache-2.0", identifier: "Apache-2.0" },
  },
  servers: [{ url: "/" }],
  security: [{ bearer: [] }],
  paths: {
    "/v1/systemone": {
      post: {
        summary: "Answer typed questions (System One wire format)",
        operationId: "systemOne",
        parameters: [IDEMPOTENCY_KEY],
        requestBody: { required: true, content: json(ref("SystemOneRequest")) },
        responses: { "200": answered(ref("SystemOneResponse"), "One answer per question, under its key."), ...errors(API_ERRORS) },
      },
    },
    "/v1/decide": {
      post: {
        summary: "Answer typed questions with abstention (native)",
        operationId: "decide",
        parameters: [IDEMPOTENCY_KEY],
        requestBody: { required: true, content: json(ref("DecideRequest")) },
        responses: { "200": answered(ref("DecideResponse"), "One answer per question, under its key."), ...errors(API_ERRORS) },
      },
    },
    "/v1/calibrations": {
      post: {
        summary: "Fit a calibration from this key's own labeled examples",
        operationId: "fitCalibration",
        requestBody: { required: true, content: json(ref("CalibrationRequest")) },
        responses: { "200": { description: "The fitted calibration, stored for this key, with its report.", headers: ID_HEADERS, content: json(ref("Calibration")) }, ...errors(API_ERRORS) },
      },
      get: {
        summary: "This key's calibrations",
        operationId: "listCalibrations",
        responses: { "200": { description: "The calibrations this key fitted.", headers: ID_HEADERS, content: json(ref("CalibrationList")) }, ...errors(GET_ERRORS) },
      },
    },
    "/v1/models": {
      get: {
        summary: "The model names a client may send",
        operationId: "listModels",
        responses: { "200": { description: "The models.", headers: ID_HEADERS, content: json(ref("ModelList")) }, ...errors(GET_ERRORS) },
      },
    },
    "/healthz": {
      get: {
        summary: "Health (no key)",
        operationId: "health",
        security: [],
        responses: { "200": { description: "Always 200 while the process answers.", headers: ID_HEADERS, content: json(ref("Health")) }, ...errors(["400", "404", "405", "408", "503"]) },
      },
    },
    "/openapi.json": {
      get: {
        summary: "This document (no key)",
        operationId: "openapi",
        security: [],
        responses: { "200": { description: "The OpenAPI 3.1 document.", headers: ID_HEADERS, content: json({ type: "object", required: ["openapi", "paths"] }) }, ...errors(["400", "405", "408", "503"]) },
      },
    },
    "/": {
      get: {
        summary: "The playground page (no key; the key is typed into the page and kept in the browser only)",
        operationId: "playground",
        security: [],
        responses: { "200": { description: "A self-contained HTML page: nothing is loaded from elsewhere.", headers: ID_HEADERS, content: { "text/html": { schema: { type: "string" } } } }, ...errors(["400", "405", "408", "503"]) },
      },
    },
    "/metrics": {
      servers: [{ url: "http://127.0.0.1:{port}", description: "The metrics listener: SVC_METRICS_HOST and SVC_METRICS_PORT, never the API port.", variables: { port: { default: "9464" } } }],
      get: {
        summary: "Prometheus metrics (no key; on their own port)",
        operationId: "metrics",
        security: [],
        responses: {
          "200": { description: "The Prometheus text format.", content: { "text/plain": { schema: { type: "string" } } } },
          "404": { $ref: "#/components/responses/E404" },
        },
      },
    },
  },
  components: {
    securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "`Authorization: Bearer svc_<prefix>_<secret>`" } },
    headers: {
      RequestId: REQUEST_ID,
      RetryAfter: { description: "Whole seconds to wait before retrying.", required: true, schema: { type: "string", pattern: "^[0-9]+$" } },
    },
    responses: Object.fromEntries(
      Object.entries(ERROR_CASES).map(([status, description]) => [
        `E${status}`,
        {
          description,
          headers: status === "429" || status === "503" ? { ...ID_HEADERS, "retry-after": { $ref: "#/components/headers/RetryAfter" } } : ID_HEADERS,
          content: json(ref("Error")),
        },
      ]),
    ),
    schemas: SCHEMAS,
  },
};

export const OPENAPI_JSON = JSON.stringify(OPENAPI);
