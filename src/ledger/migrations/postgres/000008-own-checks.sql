-- Checks of your own (docs/checks.md): migrations.ts's score and checks of take_checks.
  ALTER TABLE take_checks ADD COLUMN score double precision;
  ALTER TABLE take_checks ADD COLUMN checks text;
