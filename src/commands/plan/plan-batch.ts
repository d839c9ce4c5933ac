import { definitionStanding } from '../../batch/definition/batch-definition.js';
import { keeperFields, keeperFieldsOf } from '../../batch/ledger/batch-takes.js';
import { type LedgerRead, withLedger } from '../../batch/ledger/ledger-read.js';
import { takeIsThere } from '../../batch/ledger/saved-file-problems.js';
import { openStoreOrRefuse } from '../../batch/output/open-output-store.js';
import { filesUnder } from '../../batch/output/output-files.js';
import { folderContextOf, outputLocationRefusal } from '../../batch/output/output-owner-check.js';
import { planSource } from '../../batch/plan/plan-reads.js';
import type { AccountCheck, PlanDocument, PlanItem } from '../../batch/plan/plan-report.js';
import { buildPlanStreamed } from '../../batch/plan/plan-streamed.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import type { StreamedManifest } from '../../batch/resolve/streamed-manifest.js';
import type { Warn } from '../../batch/resolve/warnings.js';
import type { SpooledItems } from '../../documents/spooled-items.js';
import { strangerReason } from '../../downloads/files-on-disk.js';
import { UserError } from '../../errors.js';
import type { Manifest, ManifestHead } from '../../manifest/index.js';
import { checkLikeRun, checkOutputLikeRun } from './plan-check.js';
import { planDefinition } from './plan-definition.js';
import { planStreamed } from './plan-stream.js';

/** run's flags a plan previews (`plan --regenerate-expired`, `--retry-failed`), and `--verify`. */
export interface PlanAsked {
  regenerateExpired?: boolean;
  retryFailed?: boolean;
  /** Read each saved file's SHA-256, not only its size and time. */
  verify?: boolean;
  /** Preview `redefine`: a manifest that differs from its shared batch's definition would become its next. */
  redefine?: boolean;
}

/** A plan and where its ledger stands. */
export interface PlannedBatch<Items extends Iterable<PlanItem> = PlanItem[]> {
  doc: PlanDocument<Items>;
  ledger: LedgerRead;
}

/**
 * What `run` would do now (docs/commands.md, `plan`): the checks run's pre-flight makes (another
 * batch's output location, a folder that cannot take the files or has no room for them, the
 * ledger's service, the address, the account, a lost ledger),
 * then every item priced against the ledger. Nothing is sent but GET requests.
 */
export async function planBatch(batch: Batch, warn: Warn, asked: PlanAsked = {}): Promise<PlannedBatch> {
  const { manifest } = batch;
  const account = await preflightLikeRun(batch, warn);
  const outputFiles = filesUnder(manifest.outputDir, manifest.file);
  return withLedger(batch, async (ledger, note) => ({
    ledger: note,
    doc: {
      ...(await buildPlanStreamed(
        manifest,
        await planSource(ledger, asked.verify ?? false),
        account,
        Date.now(),
        {
          outputFiles,
          strayWhy: (path) => strangerReason(path, manifest.name),
          regenerateExpired: asked.regenerateExpired ?? false,
          retryFailed: asked.retryFailed ?? false,
          fileCheck: asked.verify ? 'sha256' : 'stat',
          takeIsThere: takeIsThere(asked.verify ?? false),
        },
        // An edited item's last whole body is read on its own, to name the fields that changed.
        true,
      )),
      ...(await keeperFields(manifest, ledger)),
      ...planDefinition(await definitionStanding(ledger, manifest), asked.redefine ?? false),
    },
  }));
}

/**
 * What run's pre-flight would refuse, refused in run's order; what GET /account said. `waiting`:
 * the items a streamed plan counted as not done or failed (else counted from the manifest).
 */
async function preflightLikeRun(
  batch: Batch<ManifestHead & Partial<Pick<Manifest, 'items'>>>,
  warn: Warn,
  waiting?: number,
): Promise<AccountCheck | null> {
  // Another batch's location: run refuses it before any request, so its files are not this plan's.
  const store = await openStoreOrRefuse(batch);
  const refusal = await outputLocationRefusal(folderContextOf(batch, ''), store);
  if (refusal !== null)
    throw new UserError(`run would refuse this manifest (output_owned): ${refusal}`, 'output_owned');
  // Then what run's pre-flight would refuse, in run's order: a folder that cannot take the files first.
  await checkOutputLikeRun(batch, store, waiting);
  return checkLikeRun(batch, warn);
}

/**
 * planBatch for a manifest too large to hold (plan-stream.ts): the same checks, made once its
 * items were read through once, and the plan made a chunk of items at a time. Throws
 * NotStreamable, before any check, for a batch whose plan needs every item at once.
 */
export async function planStreamedBatch(
  batch: Batch<StreamedManifest>,
  warn: Warn,
  asked: PlanAsked = {},
): Promise<PlannedBatch<SpooledItems<PlanItem>>> {
  const { manifest } = batch;
  const verify = asked.verify ?? false;
  const outputFiles = filesUnder(manifest.outputDir, manifest.file);
  const inputs = {
    outputFiles,
    strayWhy: (path: string) => strangerReason(path, manifest.name),
    regenerateExpired: asked.regenerateExpired ?? false,
    retryFailed: asked.retryFailed ?? false,
    verify,
    fileCheck: verify ? ('sha256' as const) : ('stat' as const),
    takeIsThere: takeIsThere(verify),
  };
  return withLedger(batch, async (ledger, note) => {
    const { doc, read } = await planStreamed(manifest, ledger, inputs, (waiting) =>
      preflightLikeRun(batch, warn, waiting),
    );
    try {
      return {
        ledger: note,
        doc: { ...doc, ...(await keeperFieldsOf(manifest, (id) => read.ids!.has(id), ledger)) },
      };
    } catch (error) {
      doc.items.close();
      throw error;
    }
  });
}
