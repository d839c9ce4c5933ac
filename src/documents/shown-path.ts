import { isAbsolute, relative, resolve, sep } from 'node:path';
import { isS3Uri } from '../manifest/index.js';

/** An empty, `.` or `..` segment: a path that path.relative would normalise first. */
const UNNORMAL_SEGMENT = /(^|\/)\.{0,2}(\/|$)/;

/**
 * How status and plan show a saved file: relative to the manifest's folder when inside it, else
 * absolute. The ledger stores normalised absolute paths, so for the usual file inside the folder
 * the answer is the text after the folder: taking it directly saves path.relative's work, a tenth
 * of `status`'s time at 100,000 items. Anything else goes through path.relative, except an
 * object in a bucket (`s3://bucket/key`): path.relative would take it for a relative path and
 * show `s3:/bucket/key` below the working folder, so it is shown as the ledger holds it.
 */
export function shownFrom(manifestFile: string): (path: string) => string {
  const baseDir = manifestFile.replace(/[/\\][^/\\]*$/, '');
  const prefix = `${baseDir}/`;
  const direct = sep === '/' && baseDir !== '' && resolve(baseDir) === baseDir;
  return (path) => {
    if (direct && path.startsWith(prefix)) {
      const rest = path.slice(prefix.length);
      if (!UNNORMAL_SEGMENT.test(rest)) return rest.startsWith('..') ? path : rest;
    }
    if (isS3Uri(path)) return path;
    const rel = relative(baseDir, path);
    return rel.startsWith('..') || isAbsolute(rel) ? path : rel;
  };
}

/**
 * A path as a person in `cwd` would type it: relative when inside it, else absolute; the folder
 * itself is `.`, and an object in a bucket keeps its URI. The one rule for every path mediabatch
 * shows from the working folder.
 */
export function shownFromCwd(cwd: string, path: string): string {
  // A bucket's URI or a shared ledger's address is shown as it is: no folder is relative to it.
  if (isS3Uri(path) || /^[a-z][a-z0-9+.-]*:\/\//i.test(path)) return path;
  const rel = relative(cwd, path);
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}
