import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import type { AddressInfo, Socket } from "node:net";
import { firstDown } from "../accounts/dependency.js";
import { authenticate } from "../accounts/keys.js";
import type { KeyRecord } from "../accounts/store.js";
import type { FlowDeps } from "../api/flow.js";
import { checkContentType, decode, parseEncodings, parseJson, readRaw } from "./body.js";
import { CancelledError } from "../engine/engine.js";
import { ApiError } from "./errors.js";
import { pickLanguage } from "./i18n.js";
import { ServiceMetrics, startMetricsServer } from "./metrics.js";
import { ownTurn } from "./turns.js";

/** Bodies up to this size parse in microseconds and skip the wait for their own turn (see turns.ts). */
const SMALL_BODY_BYTES = 8192;

/** The request log on stdout: none, a text line per request, or a JSON object per line (SVC_LOG=json). */
export type LogFormat = "off" | "text" | "json";

export interface ServerOptions extends FlowDeps {
  bodyTimeoutMs: number;
  /** One line per request on stdout (never the full key). */
  log: LogFormat;
  /** Open connections at most; one more is answered 503 and closed (default DEFAULT_MAX_CONNECTIONS). */
  maxConnections?: number;
  /** Prometheus metrics at GET /metrics on a listener of their own (not on the API port); none when absent. */
  metrics?: { host: string; port: number };
}

/** Each open connection holds at most one body of ~68 KB being read: this bounds that memory to ~70 MB. */
export const DEFAULT_MAX_CONNECTIONS = 1024;

export interface Ctx {
  req: IncomingMessage;
  requestId: string;
  /** The authenticated key (set on every route with auth). */
  key: KeyRecord | null;
  /** Reads the body: encoding (415), content type (422), size (413), time (408), UTF-8 JSON (400). */
  body(): Promise<unknown>;
  /** Aborts when the client goes away (reason undefined) or at shutdown (reason: the 503 to answer). Made when first read. */
  readonly signal: AbortSignal;
  /** Whether that has happened, without making the signal. */
  readonly aborted: boolean;
  /** Adds a header to the 200 answer. */
  setHeader(name: string, value: string): void;
  /** Set by the flow, for the request log and the metrics: ms the request spent in the model, tokens billed. */
  modelMs: number | null;
  billedTokens: number;
}

/** An answer that is not JSON (the playground page): its content type and bytes. */
export class RawReply {
  constructor(
    readonly contentType: string,
    readonly body: string,
  ) {}
}

export interface Route {
  method: string;
  auth: boolean;
  handler: (ctx: Ctx, deps: FlowDeps) => Promise<unknown>;
}

// Ids start with the time in ms (11 hex digits), so that usage rows land at the end of the ledger's
// request-id index: fully random ids dirtied one index page per row and doubled the ledger's write
// cost (bench:server). The other 13 hex digits (52 bits) are random, cut from a pooled buffer: one
// call into the CSPRNG per request showed up at ~8% of the request path.
let idPool = Buffer.alloc(0);
let idAt = 0;

export function newRequestId(): string {
  if (idAt + 7 > idPool.length) {
    idPool = randomBytes(7 * 256);
    idAt = 0;
  }
  idAt += 7;
  return `req_${Date.now().toString(16).padStart(11, "0")}${idPool.toString("hex", idAt - 7, idAt).slice(1)}`;
}

/** Writes the whole response in one call: headers as one flat list (no per-header setHeader). */
function send(res: ServerResponse, status: number, body: unknown, requestId: string, close: boolean, headers: Record<string, string> | null = null): void {
  const raw = body instanceof RawReply;
  const payload = raw ? body.body : JSON.stringify(body);
  const list = [
    "content-type", raw ? body.contentType : "application/json; charset=utf-8",
    "content-length", String(Buffer.byteLength(payload)),
    "x-request-id", requestId,
    "x-alt-request-id", requestId,
    "x-typesafe-request-id", requestId,
  ];
  for (const name in headers) list.push(name, headers[name]);
  if (close) list.push("connection", "close");
  res.writeHead(status, list);
  res.end(payload);
}

/** The key of `Authorization: Bearer <key>`; null when the header is missing, "" when it carries no key. */
function bearer(req: IncomingMessage): string | null {
  const h = req.headers.authorization;
  if (!h) return null;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(h);
  if (m) return m[1];
  // A key sent without its scheme would otherwise read as an invalid key.
  if (!/^\s*Bearer(\s|$)/i.test(h)) throw new ApiError(401, "auth_scheme", { headers: { "www-authenticate": "Bearer" } });
  return "";
}

export interface RunningServer {
  server: Server;
  port: number;
  url: string;
  /** Where GET /metrics is served, or null when metrics are off. */
  metricsUrl: string | null;
  /** Stops accepting, lets in-flight requests finish (up to graceMs), then closes. */
  shutdown(graceMs?: number): Promise<void>;
}

/**
 * A request being handled: what shutdown and a broken connection need to reach it. Its AbortSignal
 * is made only when something asks for it: making one per request (with getter literals for the
 * context) cost 10-20% of the HTTP path with a no-op engine (bench:server), and requests answered
 * without the model never need it.
 */
class Flight {
  /** Set when it was stopped: null when its client left, else the error to answer (shutdown). */
  stopped: ApiError | null | undefined = undefined;

  /** Nothing must be written for it any more (its connection is gone or broken). */
  get gone(): boolean {
    return this.stopped === null;
  }
  private controller: AbortController | null = null;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.stopped !== undefined) this.controller.abort(this.stopped ?? undefined);
    }
    return this.controller.signal;
  }

  /** The client left (null: nothing is written), or shutdown stops it with `reason`. */
  stop(reason: ApiError | null): void {
    if (this.stopped !== undefined) return;
    this.stopped = reason;
    this.controller?.abort(reason ?? undefined);
  }
}

/** One request's context; its signal and abort state come from its Flight (getters on the prototype: no closures per request). */
class RequestCtx implements Ctx {
  key: KeyRecord | null = null;
  headers: Record<string, string> | null = null;
  modelMs: number | null = null;
  billedTokens = 0;

  constructor(
    readonly req: IncomingMessage,
    readonly requestId: string,
    private readonly flight: Flight,
    private readonly bodyTimeoutMs: number,
  ) {}

  async body(): Promise<unknown> {
    const codings = parseEncodings(this.req.headers["content-encoding"]);
    checkContentType(this.req.headers["content-type"]);
    const raw = await readRaw(this.req, this.bodyTimeoutMs);
    if (raw.length > SMALL_BODY_BYTES || codings.length > 0) await ownTurn(this.key?.id ?? "");
    return parseJson(decode(raw, codings));
  }

  get signal(): AbortSignal {
    return this.flight.signal;
  }

  get aborted(): boolean {
    return this.flight.stopped !== undefined;
  }

  setHeader(name: string, value: string): void {
    (this.headers ??= {})[name] = value;
  }
}

/** The path and query of a request target, from origin form (`/x?y`) or absolute form (`http://h/x?y`). */
function target(url: string): { path: string; query: string } {
  let rest = url;
  if (!url.startsWith("/")) {
    const m = /^https?:\/\/[^/?#]*(.*)$/i.exec(url);
    rest = m ? m[1] || "/" : url;
  }
  const q = rest.indexOf("?");
  return q < 0 ? { path: rest, query: "" } : { path: rest.slice(0, q), query: rest.slice(q + 1) };
}

/** The query for the log with every value masked: a key pasted as ?api_key=... must not reach a log file. */
function maskedQuery(query: string): string {
  if (query === "") return "";
  return `?${query.split("&").map((part) => (part.includes("=") ? `${part.slice(0, part.indexOf("="))}=***` : part)).join("&")}`;
}

/** A whole response written straight to a socket that has no ServerResponse (unparsable request, refused connection). */
function rawResponse(status: number, reason: string, e: ApiError): { text: string; id: string } {
  const payload = JSON.stringify(e.toBody("en"));
  const id = newRequestId();
  let extra = "";
  for (const name in e.headers) extra += `${name}: ${e.headers[name]}\r\n`;
  return {
    id,
    text:
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `x-request-id: ${id}\r\nx-alt-request-id: ${id}\r\nx-typesafe-request-id: ${id}\r\n${extra}` +
      `connection: close\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
  };
}

export async function startServer(
  routes: Record<string, Route[]>,
  opts: ServerOptions,
  host: string,
  port: number,
): Promise<RunningServer> {
  let closing = false;
  const flights = new Set<Flight>();
  /** The requests of each connection still being handled (more than one only when pipelined). */
  const bySocket = new WeakMap<Socket, Set<Flight>>();
  /** Connections answered with `connection: close`: a late timeout there (a body left unread) must not write another response. */
  const ending = new WeakSet<Socket>();
  let idle: (() => void) | null = null;
  const headersTimeoutMs = opts.bodyTimeoutMs * 2;
  const maxConnections = opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const metrics = opts.metrics ? new ServiceMetrics({ pairsHeld: () => opts.admission.held(), modelState: () => opts.engine.state }) : null;
  const metricsServer = opts.metrics ? await startMetricsServer(metrics!, opts.metrics.host, opts.metrics.port) : null;
  /** Timing is read only when something reports it. */
  const timed = opts.log !== "off" || metrics !== null;

  /** One request in the log; `ctx` is null for a response written straight to the socket. */
  const logLine = (requestId: string, method: string, url: string, status: number, ms: number, ctx: RequestCtx | null): void => {
    const { path, query } = target(url);
    const prefix = ctx?.key?.prefix ?? null;
    if (opts.log === "json") {
      const line = {
        time: new Date().toISOString(),
        request_id: requestId,
        method,
        path,
        query: maskedQuery(query),
        status,
        latency_ms: Math.round(ms * 10) / 10,
        model_ms: ctx?.modelMs == null ? null : Math.round(ctx.modelMs * 10) / 10,
        key_prefix: prefix,
        input_tokens: ctx?.billedTokens ?? 0,
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    } else {
      process.stdout.write(`${new Date().toISOString()} ${requestId} ${method} ${path}${maskedQuery(query)} ${status} ${ms.toFixed(1)}ms key=${prefix ?? "-"}\n`);
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = timed ? performance.now() : 0;
    const requestId = newRequestId();
    const flight = new Flight();
    const ctx = new RequestCtx(req, requestId, flight, opts.bodyTimeoutMs);
    const socket = req.socket;
    let mine = bySocket.get(socket);
    if (!mine) bySocket.set(socket, (mine = new Set()));
    mine.add(flight);
    flights.add(flight);
    // The client went away before its answer was written: stop its work; it is not billed.
    const onClose = (): void => {
      if (!res.writableFinished) flight.stop(null);
    };
    res.once("close", onClose);
    let endpoint = "other";
    let limit: string | null = null;
    try {
      if (closing) throw new ApiError(503, "shutting_down", { headers: { "retry-after": "5" } });
      if (req.httpVersion === "1.1" && req.headers.host === undefined) throw new ApiError(400, "invalid_request");
      const { path } = target(req.url ?? "/");
      const candidates = routes[path];
      if (!candidates) throw new ApiError(404, "route_not_found", { params: { method: req.method ?? "", path } });
      endpoint = path;
      const route = candidates.find((r) => r.method === req.method);
      if (!route) {
        const allow = candidates.map((r) => r.method).join(", ");
        throw new ApiError(405, "method_not_allowed", {
          params: { method: req.method ?? "", path, allow },
          headers: { allow },
        });
      }
      if (route.auth) {
        // A shared store or counter that is down: refused before any work, never served unmetered.
        const down = opts.dependencies ? firstDown(opts.dependencies) : null;
        if (down) throw down.unavailable();
        const presented = bearer(req);
        if (presented === null) throw new ApiError(401, "auth_missing", { headers: { "www-authenticate": "Bearer" } });
        // Plain values from the embedded store and counters: no await (and no extra turn) on their path.
        const found = authenticate(opts.store, presented);
        const key = found instanceof Promise ? await found : found;
        if (!key) throw new ApiError(401, "auth_invalid", { headers: { "www-authenticate": "Bearer" } });
        ctx.key = key;
        const admitted = opts.limiter.admit(key);
        if (admitted) await admitted;
      }
      const body = await route.handler(ctx, opts);
      if (!flight.gone) send(res, 200, body, requestId, closing, ctx.headers);
    } catch (err) {
      const e = err instanceof ApiError ? err : flight.stopped instanceof ApiError ? flight.stopped : new ApiError(500, "internal");
      if (e.status === 429) limit = String(e.extra.limit);
      if (!(err instanceof ApiError) && !(err instanceof CancelledError)) {
        process.stderr.write(`[${requestId}] ${err instanceof Error ? err.stack : String(err)}\n`);
      }
      if (flight.gone) {
        // Nothing to write to.
      } else if (!res.headersSent) {
        // A body left unread (an early 401, 413, ...) would keep the connection waiting for it: close it.
        const close = closing || !req.complete || e.status === 413 || e.status === 408;
        if (close) ending.add(socket);
        send(res, e.status, e.toBody(pickLanguage(req.headers["accept-language"])), requestId, close, e.headers);
      } else res.destroy();
    } finally {
      res.off("close", onClose);
      mine.delete(flight);
      flights.delete(flight);
      // 499: the client closed the connection before the answer (as nginx logs it).
      const status = flight.gone ? 499 : res.statusCode;
      if (timed) {
        const ms = performance.now() - started;
        if (opts.log !== "off") logLine(requestId, req.method ?? "", req.url ?? "", status, ms, ctx);
        const modelSeconds = ctx.modelMs === null ? null : ctx.modelMs / 1000;
        metrics?.observe({ endpoint, status, seconds: ms / 1000, modelSeconds, tokens: ctx.billedTokens, limit });
      }
      if (closing && flights.size === 0 && idle) idle();
    }
  };

  // requireHostHeader is checked in handle() instead: node's own check answers 400 with no body and no request id.
  const server = createServer(
    {
      requestTimeout: opts.bodyTimeoutMs * 3,
      headersTimeout: headersTimeoutMs,
      // Node checks those timeouts every 30 s by default, which would let a stalled request sit far past them.
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.round(opts.bodyTimeoutMs / 4))),
      requireHostHeader: false,
    },
    (req, res) => {
      void handle(req, res);
    },
  );
  // Past the connection cap a new connection gets a 503 and is closed, before any of its bytes are read.
  let open = 0;
  server.on("connection", (socket: Socket) => {
    open++;
    socket.once("close", () => open--);
    if (open <= maxConnections) return;
    const { text } = rawResponse(503, "Service Unavailable", new ApiError(503, "overloaded", { params: { retry: 1 }, headers: { "retry-after": "1" } }));
    socket.end(text);
  });
  // Requests node cannot even parse (junk request line, bad headers, junk after a body) and headers
  // that never finish still get the documented error shape, and a request line in the log.
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    const pending = bySocket.get(socket);
    // Junk after a request on the same connection: that request's answer could never be read, so it
    // is cancelled (and not billed) rather than answered into a connection that is being closed.
    for (const f of pending ?? []) f.stop(null);
    if (!socket.writable || err.code === "ECONNRESET") return void socket.destroy();
    const timeout = err.code === "ERR_HTTP_REQUEST_TIMEOUT";
    // A timeout on a connection already answered and closing (its body left unread) is not a new request to answer.
    if (timeout && ending.has(socket)) return void socket.destroy();
    const e = timeout
      ? new ApiError(408, "headers_timeout", { params: { seconds: Math.round(headersTimeoutMs / 1000) } })
      : new ApiError(400, "invalid_request");
    const { text, id } = rawResponse(e.status, timeout ? "Request Timeout" : "Bad Request", e);
    socket.end(text);
    if (opts.log !== "off") logLine(id, "-", "-", e.status, 0, null);
    metrics?.observe({ endpoint: "other", status: e.status, seconds: 0, modelSeconds: null, tokens: 0, limit: null });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    port: actual,
    metricsUrl: metricsServer?.url ?? null,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${actual}`,
    async shutdown(graceMs = 10_000) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const drained = new Promise<void>((resolve) => {
        if (flights.size === 0) resolve();
        else idle = resolve;
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([drained, timeout]);
      clearTimeout(timer);
      // Past the grace period, what is still running is answered 503 (retry elsewhere or later), not cut off.
      if (flights.size > 0) {
        const stop = new ApiError(503, "shutting_down", { headers: { "retry-after": "5" } });
        for (const f of flights) f.stop(stop);
        const flushed = new Promise<void>((resolve) => (timer = setTimeout(resolve, 1000)));
        await Promise.race([drained, flushed]);
        clearTimeout(timer);
      }
      server.closeAllConnections();
      await closed;
      if (metricsServer) await new Promise<void>((resolve) => metricsServer.server.close(() => resolve()));
    },
  };
}
