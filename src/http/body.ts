import type { IncomingMessage } from "node:http";
import { gunzipSync } from "node:zlib";
import { ApiError } from "./errors.js";
import { jsonErrorPosition } from "./json-error.js";
import { decompressZstd, ZstdMalformed, ZstdTooLarge } from "./zstd.js";

/** The body limit after decompression (spec: 64 KiB). */
export const MAX_BODY_BYTES = 64 * 1024;
/** Compressed bodies are never larger than their content plus framing; anything past this is refused unread. */
const MAX_RAW_BYTES = MAX_BODY_BYTES + 4096;

type Coding = "gzip" | "zstd";

/** Parses Content-Encoding into the codings to undo, outermost last (so they are undone in reverse). */
export function parseEncodings(header: string | undefined): Coding[] {
  if (!header) return [];
  const codings: Coding[] = [];
  for (const raw of header.split(",")) {
    const name = raw.trim().toLowerCase();
    if (name === "" || name === "identity") continue;
    if (name === "gzip" || name === "x-gzip") codings.push("gzip");
    else if (name === "zstd") codings.push("zstd");
    else throw new ApiError(415, "unsupported_encoding", { params: { encoding: raw.trim() } });
  }
  if (codings.length > 3) throw new ApiError(415, "unsupported_encoding", { params: { encoding: header } });
  return codings;
}

/** Only JSON in UTF-8 is read; a missing Content-Type is taken as JSON. */
export function checkContentType(header: string | undefined): void {
  if (header === undefined || header === "application/json" || header.trim() === "") return;
  const [mime, ...params] = header.split(";").map((s) => s.trim().toLowerCase());
  if (mime.startsWith("multipart/") || mime.startsWith("image/")) {
    throw new ApiError(422, "text_only", { problems: [{ loc: [], code: "text_only", type: "text_only" }] });
  }
  const isJson = mime === "application/json" || (mime.startsWith("application/") && mime.endsWith("+json"));
  const charset = params.find((p) => p.startsWith("charset="))?.slice(8).replace(/"/g, "");
  if (!isJson || (charset !== undefined && charset !== "utf-8" && charset !== "utf8")) {
    throw new ApiError(422, "unsupported_content_type", {
      params: { type: header.trim() },
      problems: [{ loc: [], code: "unsupported_content_type", type: "unsupported_content_type", params: { type: header.trim() } }],
    });
  }
}

/** Reads the raw body, refusing (413) as soon as it passes the raw cap, and (408) when it is too slow. */
export function readRaw(req: IncomingMessage, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > MAX_RAW_BYTES) {
      reject(new ApiError(413, "too_large", { params: { limit: MAX_BODY_BYTES } }));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err: ApiError | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      if (err) reject(err);
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_RAW_BYTES) {
        finish(new ApiError(413, "too_large", { params: { limit: MAX_BODY_BYTES } }));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(null);
    // A client that goes away mid-body shows up here too (ECONNRESET "aborted").
    const onError = () => finish(new ApiError(400, "invalid_json"));
    const timer = setTimeout(
      () => finish(new ApiError(408, "body_timeout", { params: { seconds: Math.round(timeoutMs / 1000) } })),
      timeoutMs,
    );
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

function tooLarge(): ApiError {
  return new ApiError(413, "too_large", { params: { limit: MAX_BODY_BYTES } });
}

function gunzipCapped(raw: Buffer): Buffer {
  try {
    return gunzipSync(raw, { maxOutputLength: MAX_BODY_BYTES, chunkSize: 16 * 1024 });
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw tooLarge();
    throw new ApiError(400, "decompress_failed", { params: { encoding: "gzip" } });
  }
}

/** Decodes into one buffer of the body limit; windows over 8 MiB and dictionaries are refused (see zstd.ts). */
function unzstdCapped(raw: Buffer): Buffer {
  try {
    return decompressZstd(raw, MAX_BODY_BYTES);
  } catch (err) {
    if (err instanceof ZstdTooLarge) throw tooLarge();
    if (err instanceof ZstdMalformed) throw new ApiError(400, "decompress_failed", { params: { encoding: "zstd" } });
    throw err;
  }
}

/** The coding whose magic bytes start a body that still is compressed (no JSON text starts so), or null. */
function compressedAs(data: Buffer): Coding | null {
  if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) return "gzip";
  if (data.length >= 4 && data.readUInt32LE(0) === 0xfd2fb528) return "zstd";
  return null;
}

/** Undoes the Content-Encoding codings, each stage capped at the body limit. A compressed body sent without any is refused with the header it lacks. */
export function decode(raw: Buffer, codings: Coding[]): Buffer {
  if (codings.length === 0) {
    const compressed = compressedAs(raw);
    if (compressed) throw new ApiError(400, "compressed_without_encoding", { params: { encoding: compressed } });
  }
  let data = raw;
  for (let i = codings.length - 1; i >= 0; i--) {
    data = codings[i] === "gzip" ? gunzipCapped(data) : unzstdCapped(data);
  }
  if (data.length > MAX_BODY_BYTES) throw tooLarge();
  return data;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Strict UTF-8, then JSON. A BOM is tolerated. */
export function parseJson(data: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(data);
  } catch {
    throw new ApiError(400, "invalid_utf8");
  }
  try {
    return JSON.parse(text);
  } catch {
    const { line, column } = jsonErrorPosition(text);
    throw new ApiError(400, "invalid_json_at", { params: { line, column }, extra: { line, column } });
  }
}
