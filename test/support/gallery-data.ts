import type { TileData } from '../../src/documents/gallery/page-data.js';

/** The items and attempts a gallery page carries in its JSON data block, as its script reads them. */
export interface GalleryData {
  tiles: TileData[];
  attempts: string[][];
}

const OPEN = '<script type="application/json" id="gallery-data">';

export function galleryData(html: string): GalleryData {
  const start = html.indexOf(OPEN);
  if (start < 0) throw new Error('the page has no gallery data block');
  const end = html.indexOf('</script>', start);
  return JSON.parse(html.slice(start + OPEN.length, end)) as GalleryData;
}
