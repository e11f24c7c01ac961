import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { authenticate } from "../accounts/keys.js";
import type { KeyRecord } from "../accounts/store.js";
import type { FlowDeps } from "../api/flow.js";
import { checkContentType, decode, parseEncodings, parseJson, readRaw } from "./body.js";
import { ApiError } from "./errors.js";
import { pickLanguage } from "./i18n.js";

export interface ServerOptions extends FlowDeps {
  bodyTimeoutMs: number;
  /** One line per request on stdout (never the full key). */
  log: boolean;
}

export interface Ctx {
  req: IncomingMessage;
  requestId: string;
  /** The authenticated key (set on every route with auth). */
  key: KeyRecord | null;
  /** Reads the body: encoding (415), content type (422), size (413), time (408), UTF-8 JSON (400). */
  body(): Promise<unknown>;
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
function send(res: ServerResponse, status: number, body: unknown, requestId: string, close: boolean, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  const list = [
    "content-type", "application/json; charset=utf-8",
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

function bodyReader(req: IncomingMessage, timeoutMs: number): () => Promise<unknown> {
  return async () => {
    const codings = parseEncodings(req.headers["content-encoding"]);
    checkContentType(req.headers["content-type"]);
    const raw = await readRaw(req, timeoutMs);
    return parseJson(decode(raw, codings));
  };
}

export async function startServer(
  routes: Record<string, Route[]>,
  opts: ServerOptions,
  host: string,
  port: number,
): Promise<RunningServer> {
  let closing = false;
  let inFlight = 0;
  let idle: (() => void) | null = null;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = opts.log ? performance.now() : 0;
    const requestId = newRequestId();
    const ctx: Ctx = { req, requestId, key: null, body: bodyReader(req, opts.bodyTimeoutMs) };
    inFlight++;
    try {
      if (closing) throw new ApiError(503, "shutting_down", { headers: { "retry-after": "5" } });
      if (req.httpVersion === "1.1" && req.headers.host === undefined) throw new ApiError(400, "invalid_request");
      const url = req.url ?? "/";
      const path = url.split("?")[0];
      const candidates = routes[path];
      if (!candidates) throw new ApiError(404, "route_not_found", { params: { method: req.method ?? "", path } });
      const route = candidates.find((r) => r.method === req.method);
      if (!route) {
        const allow = candidates.map((r) => r.method).join(", ");
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
      send(res, 200, body, requestId, closing);
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError(500, "internal");
      if (!(err instanceof ApiError)) process.stderr.write(`[${requestId}] ${err instanceof Error ? err.stack : String(err)}\n`);
      if (!res.headersSent) send(res, e.status, e.toBody(pickLanguage(req.headers["accept-language"])), requestId, closing || e.status === 413 || e.status === 408, e.headers);
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

  // requireHostHeader is checked in handle() instead: node's own check answers 400 with no body and no request id.
  const server = createServer({ requestTimeout: opts.bodyTimeoutMs * 3, headersTimeout: opts.bodyTimeoutMs * 2, requireHostHeader: false }, (req, res) => {
    void handle(req, res);
  });
  // Requests node cannot even parse (junk request line, bad headers) still get the documented error shape.
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return void socket.destroy();
    const timeout = err.code === "ERR_HTTP_REQUEST_TIMEOUT";
    const e = timeout
      ? new ApiError(408, "body_timeout", { params: { seconds: Math.round((opts.bodyTimeoutMs * 3) / 1000) } })
      : new ApiError(400, "invalid_request");
    const payload = JSON.stringify(e.toBody("en"));
    const id = newRequestId();
    socket.end(
      `HTTP/1.1 ${e.status} ${timeout ? "Request Timeout" : "Bad Request"}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `x-request-id: ${id}\r\nx-alt-request-id: ${id}\r\nx-typesafe-request-id: ${id}\r\n` +
        `connection: close\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
    );
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
    async shutdown(graceMs = 10_000) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const drained = new Promise<void>((resolve) => {
        if (inFlight === 0) resolve();
        else idle = resolve;
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([drained, timeout]);
      clearTimeout(timer);
      server.closeAllConnections();
      await closed;
    },
  };
}
