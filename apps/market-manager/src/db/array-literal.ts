/**
 * A parameter as PostgreSQL's driver sends it, made faster for the journal's statements: a flat
 * array of text, numbers, bigints, booleans and nulls becomes the array literal `pg` would write
 * for it, byte for byte (`pg/lib/utils.js` prepareValue: every element quoted, `\` and `"`
 * escaped, null and undefined as NULL), escaping only an element that holds one of the two. `pg`
 * runs two regular-expression replacements over every element; a group's report statement sends
 * thousands of them (ids, hashes, base64 outputs), and those conversions showed in the manager's
 * CPU profile (bench:dispatch --profile). Anything else (not an array, or an array holding bytes, dates, arrays or objects) is
 * returned as it is, for `pg` to prepare.
 */
export function preparedParameter(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  if (value.length > 0 && plain(value)) return `{"${value.join('","')}"}`;
  let literal = "{";
  for (let i = 0; i < value.length; i++) {
    if (i > 0) literal += ",";
    const element: unknown = value[i];
    if (element === null || element === undefined) literal += "NULL";
    else if (typeof element === "string") literal += quoted(element);
    else if (typeof element === "number" || typeof element === "bigint" || typeof element === "boolean") literal += `"${String(element)}"`;
    else return value;
  }
  return literal + "}";
}

/**
 * Whether every element is written as it is between quotes: text without `\` or `"`, numbers,
 * bigints, booleans. Such an array (a group's ids, hashes and base64 outputs, its amounts) is
 * written with one `join` instead of a string grown element by element, which made a piece of
 * garbage for every element, a visible part of what the market allocates a task.
 */
function plain(values: unknown[]): boolean {
  for (let i = 0; i < values.length; i++) {
    const element: unknown = values[i];
    if (typeof element === "string") {
      if (element.includes("\\") || element.includes('"')) return false;
    } else if (typeof element !== "number" && typeof element !== "bigint" && typeof element !== "boolean") return false;
  }
  return true;
}

function quoted(text: string): string {
  if (!text.includes("\\") && !text.includes('"')) return `"${text}"`;
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
