import { message, type Lang, type MessageCode, type Params } from "./i18n.js";

/** One field problem: where (path below "body"), what (message code) and its machine type. */
export interface Problem {
  loc: (string | number)[];
  code: MessageCode;
  type: string;
  params?: Params;
}

const TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  404: "not_found_error",
  405: "invalid_request_error",
  408: "timeout_error",
  413: "request_too_large",
  415: "unsupported_media_type",
  422: "invalid_request_error",
  429: "rate_limit_error",
  500: "api_error",
  503: "service_unavailable_error",
};

/** detail[] lists at most this many problems; one more entry says how many were left out (a 65 KB body can hold ~30,000). */
export const MAX_DETAIL = 100;

/** Every error the service returns. Mapped to the wire in exactly one place (toBody). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: MessageCode;
  readonly params: Params;
  readonly problems: Problem[];
  readonly headers: Record<string, string>;
  /** Extra fields of the error object (e.g. `limit` on 429). */
  readonly extra: Record<string, string | number>;

  constructor(
    status: number,
    code: MessageCode,
    opts: {
      params?: Params;
      problems?: Problem[];
      headers?: Record<string, string>;
      extra?: Record<string, string | number>;
    } = {},
  ) {
    super(code);
    this.status = status;
    this.code = code;
    this.params = opts.params ?? {};
    this.problems = opts.problems ?? [];
    this.headers = opts.headers ?? {};
    this.extra = opts.extra ?? {};
  }

  static validation(problems: Problem[]): ApiError {
    return new ApiError(422, problems[0].code, { params: problems[0].params, problems });
  }

  toBody(lang: Lang): { error: Record<string, string | number>; detail: { loc: (string | number)[]; msg: string; type: string }[] } {
    const omitted = Math.max(0, this.problems.length - MAX_DETAIL);
    const detail = this.problems.slice(0, MAX_DETAIL).map((p) => ({
      loc: ["body", ...p.loc],
      msg: message(p.code, lang, p.params),
      type: p.type,
    }));
    if (omitted > 0) detail.push({ loc: ["body"], msg: message("problems_omitted", lang, { omitted }), type: "too_many_problems" });
    let text = message(this.code, lang, this.params);
    if (this.problems.length > 0) {
      const first = this.problems[0];
      text = first.loc.length > 0 ? `${first.loc.join(".")}: ${detail[0].msg}` : detail[0].msg;
    }
    return {
      error: { type: TYPE_BY_STATUS[this.status] ?? "api_error", message: text, ...this.extra, ...(omitted > 0 ? { problems_omitted: omitted } : {}) },
      detail,
    };
  }
}
