// The short form of an id that pages, statements, the market's log and the CLI all show. The
// market's ids are UUIDs of version 7: their first 48 bits are the time the row was made, so
// rows made in the same minute begin alike. Their last eight hex digits are random bits (in a
// version 4 UUID nearly every digit is), so those are the short id: 32 random bits, which tell
// apart the ids one page, one statement or one log shows. A copy of a task (`<id>~<r>`) keeps its
// copy number.

export const SHORT_ID_LENGTH = 8;

/** The last eight characters of the id ("5f3a9c1e"), and a task copy's "~r" after them. */
export function shortId(id: string): string {
  const copy = id.indexOf("~");
  const base = copy < 0 ? id : id.slice(0, copy);
  return (base.length <= SHORT_ID_LENGTH ? base : base.slice(-SHORT_ID_LENGTH)) + (copy < 0 ? "" : id.slice(copy));
}
