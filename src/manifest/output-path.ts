/**
 * Where a downloaded file lands. Ids are validated when the manifest is read; this checks again
 * (defence in depth) because a path outside the output folder could overwrite anything the user
 * can write, and the extension comes from a server we do not control.
 */
import { isAbsolute, join, relative } from 'node:path';
import { idProblem } from './ids.js';
import { nameProblem } from './output-names.js';

const SAFE_EXTENSION = /^[a-z0-9]{1,10}$/;

/** Lower-cased extension without its dot, or 'bin' when it is anything but short and alphanumeric. */
export function sanitizeExtension(ext: string): string {
  const candidate = String(ext).toLowerCase().replace(/^\./, '');
  return SAFE_EXTENSION.test(candidate) ? candidate : 'bin';
}

export function outputPathFor(
  outputDir: string,
  itemId: string,
  fileIndex: number,
  fileCount: number,
  ext: string,
): string {
  const invalid = idProblem(itemId);
  if (invalid !== null) throw new RangeError(`refusing to build an output path: ${invalid}`);
  if (!Number.isSafeInteger(fileCount) || fileCount < 1)
    throw new RangeError(`invalid file count: ${fileCount}`);
  if (!Number.isSafeInteger(fileIndex) || fileIndex < 0 || fileIndex >= fileCount) {
    throw new RangeError(`invalid file index ${fileIndex} for ${fileCount} file(s)`);
  }
  const name = `${fileCount > 1 ? `${itemId}-${fileIndex + 1}` : itemId}.${sanitizeExtension(ext)}`;
  const target = join(outputDir, name);
  const rel = relative(outputDir, target);
  if (rel !== name || isAbsolute(rel) || rel.startsWith('..')) {
    throw new RangeError(`refusing to write outside the output folder: ${JSON.stringify(target)}`);
  }
  return target;
}

/**
 * Like outputPathFor, for an item placed by output.name: the name may hold '/'-separated folders,
 * each checked like an id, and the result must still lie inside the output folder.
 */
export function namedOutputPath(
  outputDir: string,
  name: string,
  fileIndex: number,
  fileCount: number,
  ext: string,
): string {
  if (!name.includes('/')) return outputPathFor(outputDir, name, fileIndex, fileCount, ext);
  const invalid = nameProblem(name);
  if (invalid !== null) throw new RangeError(`refusing to build an output path: output.name ${invalid}`);
  const slash = name.lastIndexOf('/');
  const folder = join(outputDir, ...name.slice(0, slash).split('/'));
  const target = outputPathFor(folder, name.slice(slash + 1), fileIndex, fileCount, ext);
  const rel = relative(outputDir, target);
  if (isAbsolute(rel) || rel.startsWith('..')) {
    throw new RangeError(`refusing to write outside the output folder: ${JSON.stringify(target)}`);
  }
  return target;
}

const BY_CONTENT_TYPE: Record<string, string> = {
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'video/quicktime': 'mov',
  'video/x-matroska': 'mkv',
  'video/x-msvideo': 'avi',
  'video/mpeg': 'mpeg',
  'video/ogg': 'ogv',
  'video/3gpp': '3gp',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/ogg': 'ogg',
  'audio/webm': 'weba',
  'application/json': 'json',
  'text/plain': 'txt',
};

/** Extension from the content type, else from the URL path (never its query), else 'bin'. */
export function extensionFor(contentType: string | null, url: string): string {
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const known = Object.hasOwn(BY_CONTENT_TYPE, mime) ? BY_CONTENT_TYPE[mime] : undefined;
  if (known) return known;
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    pathname = String(url).split(/[?#]/)[0] ?? '';
  }
  const last = pathname.split('/').pop() ?? '';
  const dot = last.lastIndexOf('.');
  if (dot <= 0) return 'bin';
  return sanitizeExtension(last.slice(dot + 1));
}
