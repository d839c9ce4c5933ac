-- Checks of saved outputs (docs/checks.md): migrations.ts's take_checks, and the item state
-- `checks_failed`.
  CREATE TABLE take_checks (
    attempt_id bigint PRIMARY KEY REFERENCES attempts(id),
    outcome    text NOT NULL CHECK (outcome IN ('passed','failed','unchecked')),
    reason     text,
    video      text,
    checked_at text NOT NULL
  );
  ALTER TABLE items DROP CONSTRAINT items_state_check;
  ALTER TABLE items ADD CONSTRAINT items_state_check
    CHECK (state IN ('pending','in_flight','done','failed','budget_exceeded','expired','checks_failed'));
