-- A statement's own refusal (apps/market-manager/src/db/sql/statement.ts): raised where a
-- condition the statement checks does not hold, it undoes the whole statement, and the market
-- reads the code and detail as values. Returns int so it can stand in any CASE of a select list.
-- The body's semicolon is written \073: the migration runner splits its script at every semicolon.
CREATE FUNCTION market_refuse(code text, detail jsonb DEFAULT '{}'::jsonb) RETURNS int
LANGUAGE plpgsql AS E'BEGIN RAISE EXCEPTION USING ERRCODE = ''MK001'', MESSAGE = code, DETAIL = detail::text\073 END';
