/**
 * Provenance beside every output: `<name>.json` says which manifest, item, prompt, exact request,
 * job and cost produced the file, so a folder of videos keeps its story when it is copied away.
 * Everything in it comes from the ledger, so a deleted sidecar is rewritten identically on a re-run.
 */
import { readFileSync } from 'node:fs';
import { formatUsd, type Micros } from '../money.js';
import { writeFileAtomically } from './write-atomically.js';

export interface SidecarFacts {
  version: string;
  manifest: string;
  itemId: string;
  /** 1 for the first take, then one more per redo. */
  take: number;
  /** The exact POST body text the ledger committed before sending. */
  requestBody: string;
  jobId: string | null;
  amountMicros: Micros;
  refundedMicros: Micros;
  /** When mediabatch committed the request (before the POST). */
  createdAt: string;
  /** When the service finished the job. */
  completedAt: string | null;
  /** The template variables the prompt was rendered from, as the ledger keeps them (JSON text). */
  vars?: string | null;
  /**
   * Whether this file's take is its item's keeper (`mediabatch keep`): true or false once a keeper
   * is recorded for the item, null or absent (not written) before.
   */
  kept?: boolean | null;
  /**
   * For a copy of an earlier take (docs/results.md, "A copy's sidecar"): the take it was copied
   * from and when. Its request, job and times are then those of the result it copies.
   */
  copied?: { item: string | null; take: number | null; at: string } | null;
  /**
   * The take's check against its request (docs/checks.md), once it is recorded: null or absent
   * before, so a take is saved with a sidecar the checks of your own can read, and one rewrite
   * adds what they found.
   */
  check?: SidecarCheck | null;
}

/** A take's check as its sidecar says it: the score only where a check of your own gave one. */
export interface SidecarCheck {
  outcome: 'passed' | 'failed' | 'unchecked';
  reason: string | null;
  score?: number;
}

export interface SidecarFile {
  path: string;
  bytes: number;
  sha256: string;
}

/** The facts with the take's check, once it is known (null: not checked). */
export function withCheck(facts: SidecarFacts, check: SidecarCheck | null): SidecarFacts {
  return check === null ? facts : { ...facts, check };
}

/** `clip.mp4` -> `clip.json`; `clip.take1.mp4` -> `clip.take1.json`. */
export function sidecarPathFor(filePath: string): string {
  const slash = Math.max(filePath.lastIndexOf('/'), filePath.lastIndexOf('\\'));
  const dot = filePath.lastIndexOf('.');
  return `${dot > slash + 1 ? filePath.slice(0, dot) : filePath}.json`;
}

/** The sidecar's text: stable for the same facts (keys in a fixed order, two-space indent). */
export function renderSidecar(facts: SidecarFacts, file: SidecarFile): string {
  const request = JSON.parse(facts.requestBody) as { input?: { prompt?: unknown } };
  const document = {
    mediabatch_version: facts.version,
    manifest: facts.manifest,
    item: facts.itemId,
    take: facts.take,
    // Only once a keeper is chosen: sidecars written before stay byte for byte the same.
    ...(facts.kept === undefined || facts.kept === null ? {} : { kept: facts.kept }),
    prompt: typeof request.input?.prompt === 'string' ? request.input.prompt : null,
    // Only where there are variables: sidecars written before templates stay byte for byte the same.
    ...(facts.vars ? { vars: JSON.parse(facts.vars) as unknown } : {}),
    request,
    job_id: facts.jobId,
    cost_usd: formatUsd(facts.amountMicros),
    refunded_usd: formatUsd(facts.refundedMicros),
    created_at: facts.createdAt,
    completed_at: facts.completedAt,
    // Only on a copy: other sidecars stay byte for byte the same.
    ...(facts.copied
      ? { copied_from: { item: facts.copied.item, take: facts.copied.take }, copied_at: facts.copied.at }
      : {}),
    // Only once checked: sidecars of takes saved before checks stay byte for byte the same.
    ...(facts.check ? { check: facts.check } : {}),
    file: { bytes: file.bytes, sha256: file.sha256 },
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * Writes each file's sidecar unless an identical one is already there; returns how many were
 * (re)written. Called after a download and again when a re-run verifies saved files. With
 * `syncFolder: false` the caller fsyncs the folders (see writeFileAtomically). With `fresh` the
 * files were just downloaded, so their sidecars are written without first reading what lies
 * there: at most the sidecar of a run killed before it recorded them, which may be replaced.
 */
export async function ensureSidecars(
  facts: SidecarFacts,
  files: readonly SidecarFile[],
  options: { syncFolder?: boolean; fresh?: boolean } = {},
): Promise<number> {
  let written = 0;
  for (const file of files) {
    const path = sidecarPathFor(file.path);
    const text = renderSidecar(facts, file);
    if (!options.fresh && sidecarText(path) === text) continue;
    await writeFileAtomically(path, text, options.syncFolder === false ? { syncFolder: false } : {});
    written += 1;
  }
  return written;
}

/**
 * What a sidecar holds now, or null. Read synchronously: a sidecar is a few kB, and a re-run
 * reads one per saved file, where a promise's open, stat, read and close cost more than the read.
 */
function sidecarText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
