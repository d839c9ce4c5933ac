import { execFileSync } from 'node:child_process';
import { readdirSync, statfsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { resolveBatch } from '../../src/batch/resolve/resolve-batch.js';
import { runSettings } from '../../src/batch/run-settings/run-settings.js';
import { loadManifest } from '../../src/manifest/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { PART_BYTES, PARTS_IN_FLIGHT } from '../../src/storage/s3-upload.js';
import { type S3TestServer, s3TestClient, startS3Server } from '../support/s3-server.js';
import { benchDir, benchSandboxConfig, cliEnv, removeDir } from './fixtures.js';
import { type CpuWindow, childCpuSeconds, machineCpu } from './machine-cpu.js';
import { cpuMs, expectExit, ROOT, rssMb, runCli } from './spawn-cli.js';

/**
 * Scenario 11 (issue 21): 1,000 outputs of 4 MiB each saved by one run at 50 slots, to a local
 * folder and to an S3 bucket (OpenStack Swift's s3api on loopback, its data in the OS temp dir,
 * the folder's disk). Jobs are final the moment they are accepted, so the run is bound by moving
 * bytes, not by the service: the sandbox serves each output padded to 4 MiB, the CLI streams it
 * to the disk (fsynced) or into the bucket (files of one part: read whole, checked, one PUT to
 * the key with its SHA-256 and Content-MD5, then the sidecar).
 */
export const S3_ITEMS = 1_000;
export const OUTPUT_BYTES = 4 * 1024 * 1024;
export const S3_SLOTS = 50;
const PREFIX = 'bench';

export type Destination = 'disk' | 's3';

export interface TransferSample {
  target: Destination;
  /** The CLI process, spawn to exit. */
  wallMs: number;
  itemsPerSecond: number;
  mibPerSecond: number;
  peakRssMb: number;
  cpuS: number;
  userCpuS: number;
  systemCpuS: number;
  /** The bench process over the run: the in-process sandbox serving the 4 MiB downloads. */
  sandboxCpuS: number;
  /** The S3 server's processes over the run (set by withSwift). */
  serverCpuS?: number;
  /** Every process of the machine, over the run: cores busy (of 2) and cores waiting on I/O. */
  machine: CpuWindow;
}

function batchFiles(outputDir: string): Record<string, string> {
  const lines: string[] = [];
  for (let i = 1; i <= S3_ITEMS; i += 1) {
    const id = `clip-${String(i).padStart(4, '0')}`;
    lines.push(JSON.stringify({ id, prompt: `Product shot ${i}: a ceramic mug turning on a white table` }));
  }
  return {
    'batch.yaml': `version: 1\nname: bench-s3\ninput: {seconds: 2, definition: 480p}\nconcurrency: ${S3_SLOTS}\noutput: {dir: "${outputDir}"}\nitems_from: items.jsonl\n`,
    'items.jsonl': `${lines.join('\n')}\n`,
  };
}

/** What test/support/s3-server.ts starts each Swift server with. */
const SWIFT_MARKER = 'launch-server.py';

/**
 * A fresh Swift for one measurement, stopped (its folder and every object removed) after it; the
 * CPU its servers used during the measurement comes back with the result (NaN for an external
 * server, MEDIABATCH_TEST_S3_ENDPOINT, which runs elsewhere).
 */
export async function withSwift<T extends object>(
  measure: (server: S3TestServer) => Promise<T>,
): Promise<T & { serverCpuS: number }> {
  const server = await startS3Server();
  try {
    const before = childCpuSeconds(SWIFT_MARKER);
    const result = await measure(server);
    return { ...result, serverCpuS: childCpuSeconds(SWIFT_MARKER) - before };
  } finally {
    await server.stop();
  }
}

const TMPFS_MAGIC = 0x01021994;

/**
 * The filesystem of the OS temp dir, where the runs' folders and Swift's data both go: the
 * comparison is fair only if both land on one real disk, so the bench says when they do not.
 */
export function tempFilesystem(): string {
  const type = statfsSync(tmpdir()).type;
  return type === TMPFS_MAGIC ? 'tmpfs (RAM, not a disk)' : `a disk (statfs type 0x${type.toString(16)})`;
}

/** The most the S3 store's uploads can hold in memory at once (uploadCeiling). */
export interface UploadCeiling {
  downloadConcurrency: number;
  partBytes: number;
  partsInFlight: number;
  ceilingMib: number;
  thisBatchMib: number;
}

/**
 * The memory the S3 store may hold in upload buffers: each save streams its download through an
 * Upload of PART_BYTES parts, PARTS_IN_FLIGHT at a time, and the run saves `downloadConcurrency`
 * jobs at once (read from runSettings on this very manifest, so a change there shows here).
 */
export function uploadCeiling(): UploadCeiling {
  const dir = benchDir('s3-settings', batchFiles('out'));
  try {
    const loaded = loadManifest(join(dir, 'batch.yaml'));
    if (!loaded.ok) throw new Error(`bench manifest: ${JSON.stringify(loaded.problems)}`);
    const settings = runSettings(
      {
        redo: [],
        only: [],
        pollIntervalMs: null,
        regenerateExpired: false,
        retryFailed: false,
      },
      resolveBatch(loaded.manifest, { sandbox: true, env: {} }),
    );
    const { downloadConcurrency } = settings.runner;
    const mib = 1024 * 1024;
    const perUpload = PART_BYTES * PARTS_IN_FLIGHT;
    return {
      downloadConcurrency,
      partBytes: PART_BYTES,
      partsInFlight: PARTS_IN_FLIGHT,
      ceilingMib: (downloadConcurrency * perUpload) / mib,
      // A file under one part is sent by one PutObject from one buffer of its own size.
      thisBatchMib: (downloadConcurrency * Math.min(OUTPUT_BYTES, perUpload)) / mib,
    };
  } finally {
    removeDir(dir);
  }
}

/**
 * One run of the batch to `target`: the disk (a folder in the OS temp dir) or a new bucket on
 * `server`. Throws unless the run exited 0 and every output is where it belongs, whole.
 */
export async function transferRun(target: Destination, server: S3TestServer | null): Promise<TransferSample> {
  const sandbox = await startSandbox(
    benchSandboxConfig(S3_SLOTS, {
      queued_seconds: 0,
      running_seconds: { min: 0, max: 0 },
      retry_after_seconds: 1,
      output_bytes: OUTPUT_BYTES,
    }),
    { port: 0 },
  );
  let bucket: string | null = null;
  if (target === 's3') {
    if (server === null) throw new Error('an S3 run needs a server');
    bucket = await server.createBucket('mb-bench');
  }
  const dir = benchDir(`s3-${target}`, batchFiles(bucket === null ? 'out' : `s3://${bucket}/${PREFIX}`));
  try {
    const cpu = machineCpu();
    const sandboxCpu = process.cpuUsage();
    const run = await runCli(
      ['run', 'batch.yaml', '--base-url', sandbox.baseUrl, '--poll-interval', '1', '--json'],
      {
        cwd: dir,
        env: { ...cliEnv(sandbox), ...(server && target === 's3' ? server.env : {}) },
        timeoutMs: 600_000,
      },
    );
    const machine = cpu.end();
    const served = process.cpuUsage(sandboxCpu);
    expectExit(run, 0, `${target} run`);
    const report = JSON.parse(run.stdout) as { totals: { done: number } };
    if (report.totals.done !== S3_ITEMS)
      throw new Error(`${target} run: only ${report.totals.done} items done`);
    if (bucket === null) checkFolder(join(dir, 'out'));
    else await checkBucket(server!, bucket);
    const seconds = run.wallMs / 1000;
    return {
      target,
      wallMs: run.wallMs,
      itemsPerSecond: S3_ITEMS / seconds,
      mibPerSecond: (S3_ITEMS * OUTPUT_BYTES) / 1024 / 1024 / seconds,
      peakRssMb: rssMb(run.stats),
      cpuS: cpuMs(run.stats) / 1000,
      userCpuS: run.stats.userCpuMicros / 1e6,
      systemCpuS: run.stats.systemCpuMicros / 1e6,
      sandboxCpuS: (served.user + served.system) / 1e6,
      machine,
    };
  } finally {
    await sandbox.close();
    removeDir(dir);
  }
}

/** Counts what a run left where the files go: outputs of the full size, sidecars, anything else. */
function tally(entries: Iterable<{ name: string; bytes: number }>): {
  outputs: number;
  wrongSize: string[];
  sidecars: number;
  other: string[];
} {
  const found = { outputs: 0, wrongSize: [] as string[], sidecars: 0, other: [] as string[] };
  for (const { name, bytes } of entries) {
    if (/^clip-\d{4}\.mp4$/.test(name)) {
      found.outputs += 1;
      if (bytes !== OUTPUT_BYTES) found.wrongSize.push(`${name}: ${bytes} bytes`);
    } else if (/^clip-\d{4}\.json$/.test(name)) found.sidecars += 1;
    else found.other.push(name);
  }
  return found;
}

function expectAllSaved(where: string, found: ReturnType<typeof tally>, allowed: readonly string[]): void {
  const other = found.other.filter((name) => !allowed.includes(name));
  const problems = [
    found.outputs === S3_ITEMS ? '' : `${found.outputs} outputs of ${S3_ITEMS}`,
    found.sidecars === S3_ITEMS ? '' : `${found.sidecars} sidecars of ${S3_ITEMS}`,
    found.wrongSize.length === 0
      ? ''
      : `not ${OUTPUT_BYTES} bytes: ${found.wrongSize.slice(0, 5).join(', ')}`,
    other.length === 0 ? '' : `unexpected: ${other.slice(0, 5).join(', ')}`,
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`${where}: ${problems.join('; ')}`);
}

function checkFolder(folder: string): void {
  const entries = readdirSync(folder).map((name) => ({ name, bytes: statSync(join(folder, name)).size }));
  expectAllSaved(folder, tally(entries), ['.mediabatch-owner.json']);
}

/** Every object below the prefix (staging included), then no multipart upload left in the bucket. */
async function checkBucket(server: S3TestServer, bucket: string): Promise<void> {
  const client = s3TestClient(server);
  try {
    const entries: Array<{ name: string; bytes: number }> = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: `${PREFIX}/`, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) {
        entries.push({ name: (object.Key ?? '').slice(PREFIX.length + 1), bytes: object.Size ?? -1 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    expectAllSaved(`s3://${bucket}/${PREFIX}`, tally(entries), ['.mediabatch-owner.json']);
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    const left = uploads.Uploads ?? [];
    if (left.length > 0) {
      throw new Error(`s3://${bucket}: ${left.length} multipart uploads left, e.g. ${left[0]?.Key}`);
    }
  } finally {
    client.destroy();
  }
}

/**
 * What loading the S3 SDK adds to a process's resident set, apart from any buffer: a bare Node
 * process's RSS before and after importing the two packages the store loads and making a client.
 * Part of what a run to S3 holds beyond a run to the disk.
 */
export function sdkFootprintMb(): number {
  const script = [
    'const before = process.memoryUsage().rss;',
    "const sdk = await import('@aws-sdk/client-s3');",
    "await import('@aws-sdk/lib-storage');",
    "new sdk.S3Client({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9', forcePathStyle: true });",
    'process.stdout.write(String(process.memoryUsage().rss - before));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    encoding: 'utf8',
  });
  return Number(out) / 1024 / 1024;
}
