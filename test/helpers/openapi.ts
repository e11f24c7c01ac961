import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { OPENAPI } from "../../src/api/openapi.js";

/**
 * Checks answers of the service against its own OpenAPI document (GET /openapi.json), with a real
 * JSON Schema 2020-12 validator: the status must be documented for the path and method, the content
 * type must match, a JSON body must validate against the schema, and every required header must be
 * there and match its schema. Every fetch() a test makes to a service it started is checked (see
 * watchService), so the document cannot drift from the behaviour.
 */

type Json = Record<string, unknown>;

const ajv = new Ajv2020({ allErrors: true, strict: false });
ajv.addSchema({ $id: "svc-openapi", components: OPENAPI.components });
const compiled = new Map<string, ValidateFunction>();

function validator(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = compiled.get(key);
  if (!v) {
    // Refs of the document are relative to its root, which was added as "svc-openapi".
    v = ajv.compile(JSON.parse(key.replace(/"\$ref":"#\//g, '"$ref":"svc-openapi#/')) as object);
    compiled.set(key, v);
  }
  return v;
}

function resolve(node: Json): Json {
  let n = node;
  while (typeof n.$ref === "string") {
    n = (n.$ref as string)
      .replace(/^#\//, "")
      .split("/")
      .reduce<Json>((at, part) => at[part] as Json, OPENAPI as unknown as Json);
  }
  return n;
}

/** What does not match the document in one answer (empty when it matches). */
export function openApiProblems(method: string, path: string, status: number, headers: Headers, body: string): string[] {
  const paths = OPENAPI.paths as unknown as Record<string, Record<string, Json>>;
  const item = paths[path];
  const where = `${method} ${path} -> ${status}`;
  let responses: Json;
  if (!item) {
    // Paths that are not routes answer 404 in the error shape.
    if (status !== 404) return [`${where}: the path is not in the document`];
    responses = { "404": { $ref: "#/components/responses/E404" } };
  } else {
    const op = item[method.toLowerCase()] as Json | undefined;
    if (!op && status !== 405) return [`${where}: the method is not in the document`];
    responses = op ? (op.responses as Json) : { "405": { $ref: "#/components/responses/E405" } };
  }
  const documented = responses[String(status)] as Json | undefined;
  if (!documented) return [`${where}: status not documented (documented: ${Object.keys(responses).join(", ")})`];
  const response = resolve(documented);
  const problems: string[] = [];
  for (const [name, h] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
    const header = resolve(h);
    const value = headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`${where}: header ${name} missing`);
      continue;
    }
    const v = validator(header.schema as object);
    if (!v(value)) problems.push(`${where}: header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(v.errors)}`);
  }
  const content = response.content as Record<string, { schema: object }> | undefined;
  const type = (headers.get("content-type") ?? "").split(";")[0].trim();
  if (!content) return problems;
  if (!content[type]) return [...problems, `${where}: content-type ${type} not documented (${Object.keys(content).join(", ")})`];
  if (type !== "application/json") return problems;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [...problems, `${where}: body is not JSON: ${body.slice(0, 100)}`];
  }
  const v = validator(content[type].schema);
  if (!v(parsed)) problems.push(`${where}: ${ajv.errorsText(v.errors, { separator: "; " })} in ${body.slice(0, 300)}`);
  return problems;
}

/** Origins of services the tests started: only their answers are checked (a test's own fake hub is not the service). */
const watched = new Set<string>();
const realFetch = globalThis.fetch;

/** Every later fetch() to this service's origin (tests, the official client) is checked against the document. */
export function watchService(url: string): void {
  watched.add(new URL(url).origin);
  if (globalThis.fetch !== realFetch) return;
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await realFetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (!watched.has(url.origin)) return res;
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    const problems = openApiProblems(method.toUpperCase(), url.pathname, res.status, res.headers, await res.clone().text());
    if (problems.length > 0) throw new Error(`the answer does not match GET /openapi.json:\n${problems.join("\n")}`);
    return res;
  };
}

