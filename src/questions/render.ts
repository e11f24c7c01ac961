/**
 * Renders a state, instructions or a description (string, object, array, number, ...) to the text
 * the model reads. Deterministic: the same JSON value always gives the same text (and so the same
 * tokens and the same bill). Objects become "key: value" lines, nested values are indented,
 * arrays become "- item" lines; key order is the order in the request.
 */
export function renderText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value !== "object") return String(value);
  return renderBlock(value, 0).join("\n");
}

function renderBlock(value: object, depth: number): string[] {
  const pad = "  ".repeat(depth);
  const lines: string[] = [];
  const entries: [string | null, unknown][] = Array.isArray(value)
    ? value.map((v) => [null, v])
    : Object.entries(value);
  for (const [key, v] of entries) {
    const head = key === null ? `${pad}-` : `${pad}${key}:`;
    if (v !== null && typeof v === "object") {
      const inner = renderBlock(v, depth + 1);
      if (inner.length === 0) lines.push(`${head} ${Array.isArray(v) ? "[]" : "{}"}`);
      else lines.push(head, ...inner);
    } else {
      lines.push(`${head} ${v === null ? "null" : String(v)}`);
    }
  }
  return lines;
}
