-- Keepers (docs/gallery.md): which take of each manifest item a person chose; migrations.ts's
-- keepers table in PostgreSQL's types.
  CREATE TABLE keepers (
    batch_id     bigint NOT NULL REFERENCES batches(id),
    item_id      text NOT NULL,
    kept_item_id text NOT NULL,
    take         integer NOT NULL,
    chosen_at    text NOT NULL,
    PRIMARY KEY (batch_id, item_id)
  );
