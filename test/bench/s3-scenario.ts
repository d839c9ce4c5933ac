import { loadavg } from 'node:os';
import {
  type Destination,
  OUTPUT_BYTES,
  S3_ITEMS,
  S3_SLOTS,
  sdkFootprintMb,
  type TransferSample,
  tempFilesystem,
  transferRun,
  type UploadCeiling,
  uploadCeiling,
  withSwift,
} from './s3-bench.js';
import { diskWriteRate, type RateSample, s3IngestRate, s3SaveRoundRate } from './s3-reference.js';

/** A run to S3 takes minutes on this machine: one of each keeps the scenario near ten minutes. */
const S3_RUNS = 1;

/** Scenario 11, measured: each target's runs, the references beside them, memory and load. */
export interface S3Result {
  items: number;
  outputBytes: number;
  /** Where the runs' folders and Swift's data went (the OS temp dir): a disk, or tmpfs. */
  tempFilesystem: string;
  runs: TransferSample[];
  references: Record<Destination, RateSample[]>;
  ceiling: UploadCeiling;
  /** RSS a bare process gains by loading the S3 SDK. */
  sdkMb: number;
  loadBefore: number[];
  loadAfter: number[];
}

/**
 * Scenario 11: the batch to the disk, then to S3 (a fresh Swift for each measurement), each beside
 * the raw rate of its medium measured in between: the disk's write + fsync at the run's download
 * concurrency, the server's PutObject ingest at 50 at once, and the store's own round of requests
 * at the run's download concurrency.
 */
export async function measureS3(log: (message: string) => void): Promise<S3Result> {
  // The SDK warns under Node 20 on every client it makes; the CLI silences it for itself.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const loadBefore = loadavg();
  const filesystem = tempFilesystem();
  const mib = OUTPUT_BYTES / 1024 / 1024;
  log(
    `s3: ${S3_RUNS} x (${S3_ITEMS} items of ${mib} MiB at ${S3_SLOTS} slots to the disk, then to S3 on Swift); temp dir on ${filesystem}; load ${loadBefore.map((x) => x.toFixed(2)).join(' ')}`,
  );
  const ceiling = uploadCeiling();
  const sdkMb = sdkFootprintMb();
  const saves = ceiling.downloadConcurrency;
  const runs: TransferSample[] = [];
  const references: S3Result['references'] = { disk: [], s3: [] };
  for (let i = 1; i <= S3_RUNS; i += 1) {
    const of = `(${i}/${S3_RUNS})`;
    log(`s3: disk write + fsync reference, ${saves} at a time ${of}`);
    references.disk.push(await diskWriteRate(saves));
    log(`s3: run to the disk ${of}`);
    runs.push(await transferRun('disk', null));
    log(`s3: run to S3 ${of}`);
    runs.push(await withSwift((server) => transferRun('s3', server)));
    log(`s3: S3 PUT reference, ${S3_SLOTS} at a time ${of}`);
    references.s3.push(await withSwift((server) => s3IngestRate(server, S3_SLOTS)));
    log(`s3: S3 save-round reference, ${saves} at a time ${of}`);
    references.s3.push(await withSwift((server) => s3SaveRoundRate(server, saves)));
  }
  return {
    items: S3_ITEMS,
    outputBytes: OUTPUT_BYTES,
    tempFilesystem: filesystem,
    runs,
    references,
    ceiling,
    sdkMb,
    loadBefore,
    loadAfter: loadavg(),
  };
}
