-- An admin's grants and a producer's moves of earnings to their consumer balance are rare entries
-- that the admin's books and the history's sample (every 5 s) sum, and /admin lists the latest
-- grants. Indexed by their kind alone, they are found without walking the ledger, and every other
-- entry (one per paid run) costs only this predicate's check, not an index row. schema.prisma
-- cannot say a partial index, so it is written here and the schema leaves it out.
CREATE INDEX "LedgerEntry_credit_moves_idx" ON "LedgerEntry"("createdAt") WHERE kind IN ('admin-grant', 'earnings-transfer');
