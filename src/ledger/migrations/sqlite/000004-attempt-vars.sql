-- Template variables (docs/manifest.md, Templates): the values an attempt's prompt was rendered
-- from, as a JSON object in the manifest's order; NULL for an item without variables.
  ALTER TABLE attempts ADD COLUMN vars TEXT;
