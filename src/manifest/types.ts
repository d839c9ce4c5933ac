import type { ManifestProblem } from '../errors.js';
import type { VarValue } from './template.js';

export interface ManifestItem {
  id: string;
  /** item model ?? manifest model ?? null */
  model: string | null;
  /** manifest input <- item input <- matrix combination, plus `prompt` (always a non-empty string). */
  input: Record<string, unknown>;
  /** manifest metadata <- item metadata; never holds keys starting with 'mediabatch.'. */
  metadata: Record<string, unknown>;
  /** item max_cost_usd ?? manifest max_cost_usd ?? null, in micro-dollars */
  maxCostMicros: number | null;
  /**
   * How many times a take of the item that fails its check is bought again (item ?? manifest
   * `rerolls`); absent means none.
   */
  rerolls?: number;
  /**
   * The prompts sent in turn after moderation rejects the one before (`content_rejected`), rendered
   * as `input.prompt` is (item ?? manifest `fallback_prompts`); absent means none.
   */
  fallbackPrompts?: string[];
  /** This item's matrix combination (axis -> value); absent when the manifest has no matrix. */
  matrix?: Record<string, unknown>;
  /**
   * Every template variable the item sees (manifest's <- item's), lists expanded to this item's
   * value; absent when the item has no variables. `input.prompt` is already rendered from them.
   */
  vars?: Record<string, VarValue>;
  /**
   * Where its files go, relative to the output folder, without extension ('/'-separated): set from
   * output.name; absent means the id.
   */
  name?: string;
  /**
   * Which variant of its manifest item this is, when the item asks for several (`variants: N`, N > 1):
   * `of` is the item's id, which variant 1 keeps unchanged; variant n's id is `<of>.v<n>` (a hashed
   * id where that would clash, as for the matrix). `number` is 1..count. Absent when N is 1.
   */
  variant?: ItemVariant;
}

export interface ItemVariant {
  of: string;
  number: number;
  count: number;
}

/** A check of your own as the manifest names it (docs/checks.md, "Checks of your own"). */
export interface OwnCheckSpec {
  name: string;
  /** The program and its arguments, `{file}` and `{sidecar}` not yet replaced. */
  run: string[];
  timeoutMs: number;
}

export interface Manifest {
  /** Absolute path of the manifest. */
  file: string;
  name: string;
  budgetMicros: number | null;
  /** Positive integer, or null for no bound of the batch's own. */
  concurrency: number | null;
  /** Resubmissions after a retryable job failure; default 2. */
  retries: number;
  /** How far a take's length may be from its `seconds` (docs/checks.md); absent: 0.5 s. */
  durationToleranceSeconds?: number;
  /** `video_checks: false`: the built-in check is off (docs/checks.md); absent: on. */
  videoChecks?: false;
  /** `checks:`, run on each saved take after the built-in checks (docs/checks.md); absent: none. */
  checks?: OwnCheckSpec[];
  /** Absolute; output.dir resolved against the manifest's folder, default <folder>/out/<name>. */
  outputDir: string;
  /** output.sidecars: absent means on (a provenance JSON beside every output). */
  sidecars?: false;
  /** notify.url: where `run` posts its summary when it ends or stops (docs/overnight.md). */
  notifyUrl?: string;
  /** After items, items_from and matrix expansion, in manifest order (items, then items_from). */
  items: ManifestItem[];
  /** Absolute path of the `items_from` file the items were read from, when there is one. */
  itemsFrom?: string;
  /** Not mistakes, but worth a look (input fields mediabatch does not know); `plan` lists them. */
  warnings: ManifestProblem[];
}

export type ManifestResult = { ok: true; manifest: Manifest } | { ok: false; problems: ManifestProblem[] };
