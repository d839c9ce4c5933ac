import { describe, expect, it } from 'vitest';
import { GALLERY_MARKER, isGalleryPage } from '../../src/documents/gallery/page.js';

describe('a gallery page mediabatch wrote is recognised by its first bytes', () => {
  it('by the marker, or by the title and header of a page from before the marker', () => {
    expect(
      isGalleryPage(`<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n${GALLERY_MARKER}\n`),
    ).toBe(true);
    const older =
      '<!DOCTYPE html>\n<html><head><title>spring: mediabatch gallery</title></head><body>' +
      '<header class="page"><h1>spring</h1><p class="generated">mediabatch gallery, generated 2026';
    expect(isGalleryPage(older)).toBe(true);
  });

  it('not any other page or file', () => {
    expect(isGalleryPage('<!DOCTYPE html>\n<title>my notes</title>')).toBe(false);
    expect(isGalleryPage(`version: 1\n# ${GALLERY_MARKER}\n`)).toBe(false);
    expect(isGalleryPage('<!DOCTYPE html><title>x: mediabatch gallery</title>')).toBe(false);
    expect(isGalleryPage('')).toBe(false);
  });
});
