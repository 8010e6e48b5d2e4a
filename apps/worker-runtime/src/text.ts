import { z } from "zod";

// Strings that reach PostgreSQL: a NUL byte or a lone surrogate (a string that is not valid
// UTF-16, so has no UTF-8 form) is refused there with an internal error, so the schema refuses it
// first, naming the field's limit. Names also refuse control characters, which no one types.

const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const CONTROL = /[\u0000-\u001F\u007F]/;

/** Text stored as given (task arguments, user agents): at most `max` characters, no NUL, valid Unicode. */
export function storableText(max: number, label = "This text") {
  return z
    .string()
    .max(max, `${label} is at most ${max} characters.`)
    .refine((s) => !NUL.test(s), `${label} cannot contain a NUL character.`)
    .refine((s) => !LONE_SURROGATE.test(s), `${label} is not valid Unicode text.`);
}

/** A name shown to people: trimmed, 1 to `max` characters, no control characters. */
export function nameText(max: number, label = "The name") {
  return z
    .string()
    .trim()
    .min(1, `${label} cannot be empty.`)
    .max(max, `${label} is at most ${max} characters.`)
    .refine((s) => !CONTROL.test(s), `${label} cannot contain control characters.`)
    .refine((s) => !LONE_SURROGATE.test(s), `${label} is not valid Unicode text.`);
}
