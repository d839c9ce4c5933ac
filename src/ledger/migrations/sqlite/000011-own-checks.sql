-- Checks of your own (docs/checks.md): the lowest score they gave a take, and each one's verdict
-- as JSON. NULL for takes checked before, and for takes no check of your own ran on.
  ALTER TABLE take_checks ADD COLUMN score REAL;
  ALTER TABLE take_checks ADD COLUMN checks TEXT;
