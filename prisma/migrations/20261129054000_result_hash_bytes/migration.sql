-- A result's output hash is the SHA-256 of its stdout, computed by the market (resources/leases.ts
-- checkReport): its 32 bytes, not 64 hex characters, in every result row and the write-ahead log.
-- Reads give it back as hex. A stored value that is not hex (none is written) keeps its bytes.
ALTER TABLE "Result" ALTER COLUMN "outputHash" TYPE bytea
  USING CASE WHEN "outputHash" ~ '^([0-9a-f][0-9a-f])*$' THEN decode("outputHash", 'hex') ELSE convert_to("outputHash", 'UTF8') END;
