/**
 * The benefit a new job form offers, in credits: well within a new account's starting credits
 * (the market holds up to the highest benefit in escrow while a job runs) and far above what the
 * examples cost with their default settings, so a newcomer's first jobs are admitted and leave
 * credits for the next ones (test/integration/credit-moves.test.ts runs them).
 */
export const DEFAULT_BENEFIT_CREDITS = 10;
