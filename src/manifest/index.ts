/**
 * The manifest module's public surface: read a YAML manifest into validated, expanded items, or
 * into every problem with its file, line, column and field path.
 */

export { formatProblem, type ManifestProblem } from '../errors.js';
export { loadManifest, loadManifestText, readManifestText } from './load.js';
export {
  type ManifestHead,
  ManifestRead,
  NotStreamable,
  streamableHead,
  streamManifestChunks,
} from './manifest-stream.js';
export { extensionFor, namedOutputPath, outputPathFor } from './output-path.js';
export { parseManifest } from './parse.js';
export { ProblemList } from './problems.js';
export {
  isS3Uri,
  keyOfUri,
  keyUnder,
  outputChild,
  parseS3Uri,
  type S3Location,
  s3Beside,
  s3Uri,
} from './s3-uri.js';
export type { ItemVariant, Manifest, ManifestItem, ManifestResult, OwnCheckSpec } from './types.js';
export { itemGroup, itemsNamed, MAX_VARIANTS, submitOrder } from './variants.js';
