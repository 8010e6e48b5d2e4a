// An id for one money move (a grant, a move of earnings), made when its form is shown: the market
// records the move under it, so a second click or a retried request moves nothing more. Made from
// getRandomValues, which plain-HTTP pages have too (randomUUID needs a secure context).
export function newRequestId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40; // version 4
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
