// Not part of the package's entry points: a check the repository's typecheck runs. Each reason
// this package writes out (reason.ts) must be the market vocabulary's type of its code, field for
// field, so a field renamed, added or retyped on either side fails here.
import type { MarketReasonOf } from "@cyclemarket/costbenefit";
import type { ClientReasonCode, ClientReasonOf } from "./reason.ts";

/** Each assignable to the other, with the same fields (optional ones included). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? ([keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false) : false) : false;
/** The codes whose two types differ: none. */
type Differing = { [C in ClientReasonCode]: Same<ClientReasonOf<C>, MarketReasonOf<C>> extends true ? never : C }[ClientReasonCode];

export const noneDiffer: [Differing] extends [never] ? true : Differing = true;
