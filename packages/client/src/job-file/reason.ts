/** A reason as data: a code and the numbers behind it (the API's `error.data.reason`). */
export type Reason = { code: string; [detail: string]: unknown };
