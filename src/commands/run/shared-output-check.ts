import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve, sep } from 'node:path';
import type { Warn } from '../../batch/resolve/warnings.js';
import type { SharedLedger } from '../../ledger/index.js';
import { isS3Uri, type Manifest } from '../../manifest/index.js';

/** File systems several machines mount as one: a folder on one of them can be shared. */
const SHARED_FILE_SYSTEMS = /^(nfs4?|cifs|smb3?|ceph|glusterfs|lustre|gpfs|9p|virtiofs|fuse\..*|afs)$/;

/**
 * A shared ledger's runners save where the manifest says, each on its own machine. A bucket, or
 * a folder on a network file system, is one place for all of them; a folder on this machine's own
 * disk is not, while another machine runs the batch too: its files would land on its own disk.
 * Said once at the start of a run, which goes on (the ledger still records every file).
 */
export async function warnUnsharedOutput(
  ledger: SharedLedger,
  manifest: Manifest,
  warn: Warn,
  mounts = readMounts(),
): Promise<void> {
  if (!ledger.severalRunners || isS3Uri(manifest.outputDir)) return;
  const others = (await ledger.liveHosts()).filter((host) => host !== hostname());
  if (others.length === 0) return;
  const type = fileSystemOf(resolve(manifest.outputDir), mounts);
  if (type !== null && SHARED_FILE_SYSTEMS.test(type)) return;
  warn({
    code: 'output_not_shared',
    message:
      `the output folder ${manifest.outputDir} is on this machine's own disk (${type ?? 'unknown'}), while runners of ` +
      `this batch on ${others.join(', ')} save to theirs: use an s3:// output or a folder every machine mounts`,
  });
}

interface Mount {
  at: string;
  type: string;
}

/** Linux's table of mounts; elsewhere none is known and the folder is taken as unshared. */
function readMounts(): Mount[] {
  try {
    return readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .flatMap((line) => {
        const [, at, type] = line.split(' ');
        return at && type ? [{ at: at.replace(/\\040/g, ' '), type }] : [];
      });
  } catch {
    return [];
  }
}

/** The type of the file system holding `path`: its longest mount point. */
export function fileSystemOf(path: string, mounts: readonly Mount[]): string | null {
  let best: Mount | null = null;
  for (const mount of mounts) {
    const inside =
      path === mount.at || path.startsWith(mount.at.endsWith(sep) ? mount.at : `${mount.at}${sep}`);
    if (inside && (best === null || mount.at.length > best.at.length)) best = mount;
  }
  return best?.type ?? null;
}
