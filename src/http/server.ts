import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { authenticate } from "../accounts/keys.js";
import type { KeyRecord } from "../accounts/store.js";
import { answer, type FlowDeps } from "../api/flow.js";
import { listModels } from "../api/models.js";
import { parseSystemOne, systemOneAnswer, type SystemOneResponse } from "../api/systemone.js";
import { checkContentType, decode, parseEncodings, parseJson, readRaw } from "./body.js";
import { ApiError } from "./errors.js";
import { pickLanguage } from "./i18n.js";

export interface ServerOptions extends FlowDeps {
  bodyTimeoutMs: number;
  /** One line per request on stdout (never the full key). */
  log: boolean;
}

interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  key: KeyRecord | null;
}

type Handler = (ctx: Ctx, opts: ServerOptions) => Promise<unknown>;

interface Route {
  method: string;
  auth: boolean;
  handler: Handler;
}

export function newRequestId(): string {
  return `req_${randomBytes(12).toString("hex")}`;
}

async function readJson(ctx: Ctx, opts: ServerOptions): Promise<unknown> {
  const codings = parseEncodings(ctx.req.headers["content-encoding"]);
  checkContentType(ctx.req.headers["content-type"]);
  const raw = await readRaw(ctx.req, opts.bodyTimeoutMs);
  return parseJson(decode(raw, codings));
}

const systemOne: Handler = async (ctx, opts) => {
  const body = await readJson(ctx, opts);
  const request = parseSystemOne(body);
  const done = await answer(opts, request, { key: ctx.key!, requestId: ctx.requestId, endpoint: "/v1/systemone" });
  const answers: SystemOneResponse["answers"] = {};
  for (const r of done.results) answers[r.question.key] = systemOneAnswer(r.question, r.numbers);
  const response: SystemOneResponse = {
    model: done.model,
    answers,
    usage: { input_tokens: done.inputTokens, output_tokens: 0 },
  };
  return response;
};

const ROUTES: Record<string, Route[]> = {
  "/healthz": [
    {
      method: "GET",
      auth: false,
      handler: async (_ctx, opts) => ({ status: "ok", model: opts.engine.state }),
    },
  ],
  "/v1/models": [
    {
      method: "GET",
      auth: true,
      handler: async (_ctx, opts) =>
        listModels(opts.engine.engine.info, opts.engine.engine.calibration.default_min_confidence),
    },
  ],
  "/v1/systemone": [{ method: "POST", auth: true, handler: systemOne }],
};

/** Registers another route (used by the native API module). */
export function addRoute(path: string, route: Route): void {
  (ROUTES[path] ??= []).push(route);
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

function bearer(req: IncomingMessage): string | null {
  const h = req.headers.authorization;
  if (!h) return null;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : "";
}

export interface RunningServer {
  server: Server;
  port: number;
  url: string;
  /** Stops accepting, lets in-flight requests finish (up to graceMs), then closes. */
  shutdown(graceMs?: number): Promise<void>;
}

export async function startServer(opts: ServerOptions, host: string, port: number): Promise<RunningServer> {
  let closing = false;
  let inFlight = 0;
  let idle: (() => void) | null = null;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const requestId = newRequestId();
    res.setHeader("x-request-id", requestId);
    res.setHeader("x-alt-request-id", requestId);
    res.setHeader("x-typesafe-request-id", requestId);
    const lang = pickLanguage(req.headers["accept-language"]);
    const ctx: Ctx = { req, res, requestId, key: null };
    inFlight++;
    try {
      if (closing) {
        res.setHeader("connection", "close");
        throw new ApiError(503, "shutting_down", { headers: { "retry-after": "5" } });
      }
      const url = req.url ?? "/";
      const path = url.split("?")[0];
      const routes = ROUTES[path];
      if (!routes) throw new ApiError(404, "route_not_found", { params: { method: req.method ?? "", path } });
      const route = routes.find((r) => r.method === req.method);
      if (!route) {
        const allow = routes.map((r) => r.method).join(", ");
        throw new ApiError(405, "method_not_allowed", {
          params: { method: req.method ?? "", path, allow },
          headers: { allow },
        });
      }
      if (route.auth) {
        const presented = bearer(req);
        if (presented === null) throw new ApiError(401, "auth_missing", { headers: { "www-authenticate": "Bearer" } });
        const key = authenticate(opts.store, presented);
        if (!key) throw new ApiError(401, "auth_invalid", { headers: { "www-authenticate": "Bearer" } });
        ctx.key = key;
        opts.limiter.admit(key);
      }
      const body = await route.handler(ctx, opts);
      send(res, 200, body);
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError(500, "internal");
      if (!(err instanceof ApiError)) process.stderr.write(`[${requestId}] ${err instanceof Error ? err.stack : String(err)}\n`);
      if (e.status === 413 || e.status === 408) res.setHeader("connection", "close");
      if (!res.headersSent) send(res, e.status, e.toBody(lang), e.headers);
      else res.destroy();
    } finally {
      inFlight--;
      if (opts.log) {
        const ms = (performance.now() - started).toFixed(1);
        process.stdout.write(
          `${new Date().toISOString()} ${requestId} ${req.method} ${req.url} ${res.statusCode} ${ms}ms key=${ctx.key?.prefix ?? "-"}\n`,
        );
      }
      if (closing && inFlight === 0 && idle) idle();
    }
  };

  const server = createServer({ requestTimeout: opts.bodyTimeoutMs * 3, headersTimeout: opts.bodyTimeoutMs * 2 }, (req, res) => {
    void handle(req, res);
  });
  server.on("clientError", (_err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    port: actual,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${actual}`,
    shutdown(graceMs = 10_000) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const drained = new Promise<void>((resolve) => {
        if (inFlight === 0) resolve();
        else idle = resolve;
      });
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
      return Promise.race([Promise.all([drained, closed]).then(() => undefined), timeout]).then(() => {
        server.closeAllConnections();
      });
    },
  };
}
